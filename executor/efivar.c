// SPDX-License-Identifier: MIT
/*
 * EFI variables through efivarfs and the boot manager's load options (see
 * efivar.h). Written from the kernel's efivarfs documentation and the UEFI
 * specification (EFI_LOAD_OPTION, device path nodes and their text forms).
 */
#include "efivar.h"

#include "fsutil.h"

#include <blkid/blkid.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* statfs f_type of efivarfs (include/uapi/linux/magic.h). */
#define EFIVARFS_MAGIC_NUMBER 0xde5e81e4

/* Device path node types and subtypes we name (UEFI spec, "Device Path Protocol"). */
enum {
	DP_HARDWARE = 0x01,
	DP_ACPI = 0x02,
	DP_MESSAGING = 0x03,
	DP_MEDIA = 0x04,
	DP_BBS = 0x05,
	DP_END = 0x7f,
};
#define DP_HW_PCI 0x01
#define DP_HW_VENDOR 0x04
#define DP_ACPI_ACPI 0x01
#define DP_MSG_SCSI 0x02
#define DP_MSG_USB 0x05
#define DP_MSG_VENDOR 0x0a
#define DP_MSG_MAC 0x0b
#define DP_MSG_IPV4 0x0c
#define DP_MSG_IPV6 0x0d
#define DP_MSG_SATA 0x12
#define DP_MSG_NVME 0x17
#define DP_MSG_URI 0x18
#define DP_MEDIA_HD 0x01
#define DP_MEDIA_VENDOR 0x03
#define DP_MEDIA_FILE 0x04
#define DP_MEDIA_FV_FILE 0x06
#define DP_MEDIA_FV 0x07
#define DP_END_INSTANCE 0x01
#define DP_END_ENTIRE 0xff

#define HD_NODE_SIZE 42
#define HD_FORMAT_MBR 0x01
#define HD_FORMAT_GPT 0x02
#define HD_SIGNATURE_MBR 0x01
#define HD_SIGNATURE_GUID 0x02

/* EISA PNP ids as ACPI HID values: PNP0A03 (PCI root), PNP0A08 (PCIe root). */
#define ACPI_HID_PCI_ROOT 0x0a0341d0u
#define ACPI_HID_PCIE_ROOT 0x0a0841d0u

/* ---- little endian, whatever the host ---- */

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- variables ---- */

static int variable_path(const struct bci_executor *ex, const char *name, const char *guid,
			 char *path)
{
	/* A name with '/' would leave the folder; efivarfs would refuse it anyway. */
	if (!*name || strchr(name, '/') || strchr(guid, '/'))
		return -EINVAL;
	return bci_path(ex, path, BCI_EFIVARS_DIR "/%s-%s", name, guid);
}

int bci_efivar_available(const struct bci_executor *ex)
{
	char path[PATH_MAX];
	struct dirent *entry;
	struct stat st;
	int ret = -ENOMEDIUM;
	DIR *dir;

	if (bci_path(ex, path, "/sys/firmware/efi") < 0 || stat(path, &st) < 0)
		return -ENODEV;
	if (bci_path(ex, path, BCI_EFIVARS_DIR) < 0)
		return -ENAMETOOLONG;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ENOMEDIUM : -errno;
	/* The folder exists whenever the kernel booted through EFI; only a mount fills it. */
	while ((entry = readdir(dir)))
		if (entry->d_name[0] != '.') {
			ret = 0;
			break;
		}
	closedir(dir);
	return ret;
}

int bci_efivar_get(const struct bci_executor *ex, const char *name, const char *guid,
		   uint32_t *attributes, uint8_t **data, size_t *size)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = variable_path(ex, name, guid, path);
	if (ret < 0)
		return ret;
	ret = bci_read_file(path, &text, &len, BCI_EFIVAR_MAX_SIZE);
	if (ret < 0)
		return ret;
	if (len < 4) {
		free(text);
		return -EINVAL;
	}
	if (attributes)
		*attributes = get_le32((const uint8_t *)text);
	/* Data moves to the front; the buffer stays NUL-terminated and never empty. */
	memmove(text, text + 4, len - 4 + 1);
	*data = (uint8_t *)text;
	*size = len - 4;
	return 0;
}

/*
 * efivarfs marks its files immutable so that `rm -rf /sys` cannot brick a
 * machine; the flag must go before a write or an unlink. A fake tree (tmpfs
 * has no flags at all) answers ENOTTY or EOPNOTSUPP: nothing to clear there.
 * Returns 1 when the flag was cleared, 0 when there was none, or -errno.
 */
static int clear_immutable(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL ? 0 : -errno;
	if (!(flags & FS_IMMUTABLE_FL))
		return 0;
	flags &= ~FS_IMMUTABLE_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
		return -errno;
	return 1;
}

static void restore_immutable(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		flags |= FS_IMMUTABLE_FL;
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
}

int bci_efivar_set(const struct bci_executor *ex, const char *name, const char *guid,
		   uint32_t attributes, const void *data, size_t size)
{
	char path[PATH_MAX];
	uint8_t *body = NULL;
	bool created = false, efivarfs = false;
	struct statfs sfs;
	int fd = -1, ret, was_immutable = 0;
	ssize_t written;

	if (size > BCI_EFIVAR_MAX_SIZE)
		return -E2BIG;
	ret = variable_path(ex, name, guid, path);
	if (ret < 0)
		return ret;
	body = malloc(4 + size);
	if (!body)
		return -ENOMEM;
	put_le32(body, attributes);
	if (size)
		memcpy(body + 4, data, size);

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		created = true;
	} else if (errno == EEXIST) {
		/* The flag is cleared through a read-only fd: an immutable file refuses O_WRONLY. */
		int rfd = open(path, O_RDONLY | O_CLOEXEC);
		if (rfd < 0) {
			ret = -errno;
			goto out_body;
		}
		was_immutable = clear_immutable(rfd);
		close(rfd);
		if (was_immutable < 0) {
			ret = was_immutable;
			goto out_body;
		}
		fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		ret = -errno;
		goto out_body;
	}
	efivarfs = fstatfs(fd, &sfs) == 0 && (unsigned long)sfs.f_type == EFIVARFS_MAGIC_NUMBER;

	/* efivarfs hands each write(2) to SetVariable() whole: one call, or a torn variable. */
	written = write(fd, body, 4 + size);
	if (written < 0) {
		ret = -errno;
		goto out_fd;
	}
	if ((size_t)written != 4 + size) {
		ret = -EIO;
		goto out_fd;
	}
	/* A regular file (a test tree) must also lose an older, longer content. */
	if (!efivarfs && ftruncate(fd, (off_t)(4 + size)) < 0) {
		ret = -errno;
		goto out_fd;
	}
	/* efivarfs has no fsync (SetVariable already reached the store): EINVAL is fine. */
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
		ret = -errno;
		goto out_fd;
	}
	if (was_immutable > 0)
		restore_immutable(fd);
	ret = 0;
out_fd:
	close(fd);
	/* A file we created and could not write would stay as an empty name in efivarfs. */
	if (ret < 0 && created)
		unlink(path);
out_body:
	free(body);
	return ret;
}

int bci_efivar_delete(const struct bci_executor *ex, const char *name, const char *guid)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = variable_path(ex, name, guid, path);
	if (ret < 0)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = clear_immutable(fd);
	close(fd);
	if (ret < 0)
		return ret;
	return unlink(path) < 0 ? -errno : 0;
}

/* ---- text ---- */

int bci_efi_utf16_to_utf8(const uint8_t *utf16, size_t units, char **out)
{
	/* Each unit gives at most 3 bytes; a surrogate pair (2 units) gives 4. */
	char *text = malloc(units * 3 + 1), *p;

	if (!text)
		return -ENOMEM;
	p = text;
	for (size_t i = 0; i < units; i++) {
		uint32_t c = get_le16(utf16 + 2 * i);

		if (c == 0)
			break;
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < units) {
			uint32_t low = get_le16(utf16 + 2 * (i + 1));
			if (low >= 0xdc00 && low <= 0xdfff) {
				c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
				i++;
			} else {
				c = 0xfffd;
			}
		} else if (c >= 0xd800 && c <= 0xdfff) {
			c = 0xfffd;
		}
		if (c < 0x80) {
			*p++ = (char)c;
		} else if (c < 0x800) {
			*p++ = (char)(0xc0 | c >> 6);
			*p++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*p++ = (char)(0xe0 | c >> 12);
			*p++ = (char)(0x80 | (c >> 6 & 0x3f));
			*p++ = (char)(0x80 | (c & 0x3f));
		} else {
			*p++ = (char)(0xf0 | c >> 18);
			*p++ = (char)(0x80 | (c >> 12 & 0x3f));
			*p++ = (char)(0x80 | (c >> 6 & 0x3f));
			*p++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*p = '\0';
	*out = text;
	return 0;
}

/* Decodes one UTF-8 sequence at @s; its length, or -EILSEQ (overlong, surrogate, > U+10FFFF). */
static int utf8_decode(const unsigned char *s, uint32_t *c)
{
	int len;
	uint32_t min;

	if (s[0] < 0x80) {
		*c = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		len = 2, *c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, *c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, *c = s[0] & 0x07, min = 0x10000;
	} else {
		return -EILSEQ;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -EILSEQ;
		*c = *c << 6 | (s[i] & 0x3f);
	}
	if (*c < min || *c > 0x10ffff || (*c >= 0xd800 && *c <= 0xdfff))
		return -EILSEQ;
	return len;
}

int bci_efi_utf8_to_utf16(const char *utf8, uint8_t **out, size_t *size)
{
	const unsigned char *s = (const unsigned char *)utf8;
	/* At most one unit per byte, plus the NUL. */
	uint8_t *buf = malloc(2 * (strlen(utf8) + 1)), *p;

	if (!buf)
		return -ENOMEM;
	p = buf;
	while (*s) {
		uint32_t c;
		int len = utf8_decode(s, &c);

		if (len < 0) {
			free(buf);
			return len;
		}
		s += len;
		if (c >= 0x10000) {
			c -= 0x10000;
			put_le16(p, (uint16_t)(0xd800 + (c >> 10)));
			put_le16(p + 2, (uint16_t)(0xdc00 + (c & 0x3ff)));
			p += 4;
		} else {
			put_le16(p, (uint16_t)c);
			p += 2;
		}
	}
	put_le16(p, 0);
	p += 2;
	*out = buf;
	*size = (size_t)(p - buf);
	return 0;
}

/* The text form keeps the first three fields as numbers, hence the mixed byte order. */
void bci_efi_guid_format(const uint8_t guid[16], char text[37])
{
	snprintf(text, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", get_le32(guid),
		 get_le16(guid + 4), get_le16(guid + 6), guid[8], guid[9], guid[10], guid[11],
		 guid[12], guid[13], guid[14], guid[15]);
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int bci_efi_guid_parse(const char *text, uint8_t guid[16])
{
	uint8_t bytes[16];
	size_t n = 0;

	if (strlen(text) != 36)
		return -EINVAL;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return -EINVAL;
			continue;
		}
		int high = hex_value(text[i]), low = hex_value(text[i + 1]);
		if (high < 0 || low < 0)
			return -EINVAL;
		bytes[n++] = (uint8_t)(high << 4 | low);
		i++;
	}
	/* bytes[] is the text order; the first three fields are stored little endian. */
	guid[0] = bytes[3], guid[1] = bytes[2], guid[2] = bytes[1], guid[3] = bytes[0];
	guid[4] = bytes[5], guid[5] = bytes[4];
	guid[6] = bytes[7], guid[7] = bytes[6];
	memcpy(guid + 8, bytes + 8, 8);
	return 0;
}

/* ---- device paths ---- */

int bci_efi_device_path_check(const uint8_t *path, size_t size)
{
	size_t offset = 0;
	int nodes = 0;

	while (offset + 4 <= size) {
		uint16_t length = get_le16(path + offset + 2);

		if (length < 4 || length > size - offset)
			return -EINVAL;
		nodes++;
		offset += length;
		if (path[offset - length] == DP_END && path[offset - length + 1] == DP_END_ENTIRE)
			return offset == size ? nodes : -EINVAL;
	}
	return -EINVAL;
}

/* An appending snprintf: keeps counting past the end, like snprintf does. */
struct text_out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_printf(struct text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct text_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL,
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void out_hex(struct text_out *o, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out_printf(o, "%02x", p[i]);
}

static void out_guid(struct text_out *o, const uint8_t *p)
{
	char text[37];

	bci_efi_guid_format(p, text);
	out_printf(o, "%s", text);
}

/* A UTF-16 string of @bytes bytes (NUL-terminated or not) as UTF-8. */
static void out_utf16(struct text_out *o, const uint8_t *p, size_t bytes)
{
	char *text = NULL;

	if (bci_efi_utf16_to_utf8(p, bytes / 2, &text) == 0)
		out_printf(o, "%s", text);
	free(text);
}

static void format_hard_drive(struct text_out *o, const uint8_t *n)
{
	out_printf(o, "HD(%u,", get_le32(n + 4));
	if (n[40] == HD_FORMAT_GPT && n[41] == HD_SIGNATURE_GUID) {
		out_printf(o, "GPT,");
		out_guid(o, n + 24);
	} else if (n[40] == HD_FORMAT_MBR && n[41] == HD_SIGNATURE_MBR) {
		out_printf(o, "MBR,0x%08x", get_le32(n + 24));
	} else {
		out_printf(o, "%u,%u,", n[40], n[41]);
		out_hex(o, n + 24, 16);
	}
	out_printf(o, ",0x%llx,0x%llx)", (unsigned long long)get_le64(n + 8),
		   (unsigned long long)get_le64(n + 16));
}

/* Prints a node whose length was checked; returns false to fall back on Path(). */
static bool format_node(struct text_out *o, const uint8_t *n, uint16_t length)
{
	uint8_t type = n[0], subtype = n[1];

	switch (type << 8 | subtype) {
	case DP_HARDWARE << 8 | DP_HW_PCI:
		if (length < 6)
			return false;
		out_printf(o, "Pci(0x%x,0x%x)", n[5], n[4]);
		return true;
	case DP_HARDWARE << 8 | DP_HW_VENDOR:
	case DP_MESSAGING << 8 | DP_MSG_VENDOR:
	case DP_MEDIA << 8 | DP_MEDIA_VENDOR:
		if (length < 20)
			return false;
		out_printf(o, "%s(", type == DP_HARDWARE ? "VenHw" : type == DP_MEDIA ? "VenMedia" : "VenMsg");
		out_guid(o, n + 4);
		if (length > 20) {
			out_printf(o, ",");
			out_hex(o, n + 20, length - 20u);
		}
		out_printf(o, ")");
		return true;
	case DP_ACPI << 8 | DP_ACPI_ACPI:
		if (length < 12)
			return false;
		if (get_le32(n + 4) == ACPI_HID_PCI_ROOT)
			out_printf(o, "PciRoot(0x%x)", get_le32(n + 8));
		else if (get_le32(n + 4) == ACPI_HID_PCIE_ROOT)
			out_printf(o, "PcieRoot(0x%x)", get_le32(n + 8));
		else
			out_printf(o, "Acpi(0x%08x,0x%x)", get_le32(n + 4), get_le32(n + 8));
		return true;
	case DP_MESSAGING << 8 | DP_MSG_SCSI:
		if (length < 8)
			return false;
		out_printf(o, "Scsi(0x%x,0x%x)", get_le16(n + 4), get_le16(n + 6));
		return true;
	case DP_MESSAGING << 8 | DP_MSG_USB:
		if (length < 6)
			return false;
		out_printf(o, "USB(0x%x,0x%x)", n[4], n[5]);
		return true;
	case DP_MESSAGING << 8 | DP_MSG_MAC:
		if (length < 37)
			return false;
		out_printf(o, "MAC(");
		/* Ethernet (interface type 0 or 1) uses 6 of the 32 address bytes. */
		out_hex(o, n + 4, n[36] <= 1 ? 6 : 32);
		out_printf(o, ",0x%x)", n[36]);
		return true;
	case DP_MESSAGING << 8 | DP_MSG_IPV4:
		if (length < 19)
			return false;
		out_printf(o, "IPv4(%u.%u.%u.%u,%s,%s)", n[8], n[9], n[10], n[11],
			   get_le16(n + 16) == 6 ? "TCP" : get_le16(n + 16) == 17 ? "UDP" : "0",
			   n[18] ? "Static" : "DHCP");
		return true;
	case DP_MESSAGING << 8 | DP_MSG_IPV6:
		if (length < 36)
			return false;
		out_printf(o, "IPv6(");
		for (int i = 0; i < 16; i += 2)
			out_printf(o, "%s%x", i ? ":" : "", n[20 + i] << 8 | n[21 + i]);
		out_printf(o, ")");
		return true;
	case DP_MESSAGING << 8 | DP_MSG_SATA:
		if (length < 10)
			return false;
		out_printf(o, "Sata(0x%x,0x%x,0x%x)", get_le16(n + 4), get_le16(n + 6),
			   get_le16(n + 8));
		return true;
	case DP_MESSAGING << 8 | DP_MSG_NVME:
		if (length < 16)
			return false;
		out_printf(o, "NVMe(0x%x,", get_le32(n + 4));
		for (int i = 0; i < 8; i++)
			out_printf(o, "%s%02X", i ? "-" : "", n[8 + i]);
		out_printf(o, ")");
		return true;
	case DP_MESSAGING << 8 | DP_MSG_URI:
		out_printf(o, "Uri(");
		for (uint16_t i = 4; i < length; i++)
			out_printf(o, isprint(n[i]) ? "%c" : "%%%02X", n[i]);
		out_printf(o, ")");
		return true;
	case DP_MEDIA << 8 | DP_MEDIA_HD:
		if (length < HD_NODE_SIZE)
			return false;
		format_hard_drive(o, n);
		return true;
	case DP_MEDIA << 8 | DP_MEDIA_FILE:
		out_printf(o, "File(");
		out_utf16(o, n + 4, length - 4u);
		out_printf(o, ")");
		return true;
	case DP_MEDIA << 8 | DP_MEDIA_FV_FILE:
	case DP_MEDIA << 8 | DP_MEDIA_FV:
		if (length < 20)
			return false;
		out_printf(o, "%s(", subtype == DP_MEDIA_FV ? "Fv" : "FvFile");
		out_guid(o, n + 4);
		out_printf(o, ")");
		return true;
	}
	return false;
}

int bci_efi_device_path_format(const uint8_t *path, size_t size, char *buf, size_t bufsize)
{
	struct text_out o = { buf, bufsize, 0 };
	size_t offset = 0;
	bool separator = false;

	if (bci_efi_device_path_check(path, size) < 0) {
		if (bufsize)
			buf[0] = '\0';
		return -EINVAL;
	}
	while (offset < size) {
		const uint8_t *n = path + offset;
		uint16_t length = get_le16(n + 2);

		offset += length;
		if (n[0] == DP_END) {
			/* Another instance follows (a multi-instance path): the spec writes ','. */
			if (n[1] == DP_END_INSTANCE)
				out_printf(&o, ",");
			separator = false;
			continue;
		}
		if (separator)
			out_printf(&o, "/");
		separator = true;
		if (!format_node(&o, n, length)) {
			out_printf(&o, "Path(%u,%u,", n[0], n[1]);
			out_hex(&o, n + 4, length - 4u);
			out_printf(&o, ")");
		}
	}
	if (bufsize)
		buf[o.len < bufsize ? o.len : bufsize - 1] = '\0';
	return o.len > (size_t)INT32_MAX ? -EOVERFLOW : (int)o.len;
}

int bci_efi_hard_drive_probe(const char *disk_path, unsigned partition_number,
			     struct bci_efi_hard_drive *hd)
{
	blkid_probe probe = blkid_new_probe_from_filename(disk_path);
	blkid_partlist partitions;
	blkid_parttable table;
	blkid_partition partition;
	const char *type, *uuid;
	unsigned sector_size;
	int ret;

	if (!probe)
		return errno ? -errno : -ENOENT;
	blkid_probe_enable_superblocks(probe, 0);
	blkid_probe_enable_partitions(probe, 1);
	partitions = blkid_probe_get_partitions(probe);
	table = partitions ? blkid_partlist_get_table(partitions) : NULL;
	type = table ? blkid_parttable_get_type(table) : NULL;
	if (!type || strcmp(type, "gpt") != 0) {
		ret = -EMEDIUMTYPE;
		goto out;
	}
	partition = partition_number <= INT32_MAX
			    ? blkid_partlist_get_partition_by_partno(partitions, (int)partition_number)
			    : NULL;
	uuid = partition ? blkid_partition_get_uuid(partition) : NULL;
	if (!partition || !uuid) {
		ret = -ENOENT;
		goto out;
	}
	ret = bci_efi_guid_parse(uuid, hd->partition_guid);
	if (ret < 0)
		goto out;
	/* libblkid counts 512-byte sectors; HD() counts the disk's logical blocks. */
	sector_size = blkid_probe_get_sectorsize(probe);
	if (sector_size < 512 || sector_size % 512) {
		ret = -EINVAL;
		goto out;
	}
	hd->partition_number = partition_number;
	hd->start_lba = (uint64_t)blkid_partition_get_start(partition) * 512 / sector_size;
	hd->size_lba = (uint64_t)blkid_partition_get_size(partition) * 512 / sector_size;
	ret = 0;
out:
	blkid_free_probe(probe);
	return ret;
}

int bci_efi_device_path_hd_file(const struct bci_efi_hard_drive *hd, const char *loader,
				uint8_t **out, size_t *size)
{
	uint8_t *name = NULL, *path, *p;
	size_t name_size = 0, total;
	char *backslashed;
	int ret;

	backslashed = strdup(loader);
	if (!backslashed)
		return -ENOMEM;
	/* EFI paths use '\'; '/' is easier to pass through shells, iPXE and command lines. */
	for (char *c = backslashed; *c; c++)
		if (*c == '/')
			*c = '\\';
	ret = bci_efi_utf8_to_utf16(backslashed, &name, &name_size);
	free(backslashed);
	if (ret < 0)
		return ret;
	if (name_size + 4 > UINT16_MAX) {
		free(name);
		return -ENAMETOOLONG;
	}
	total = HD_NODE_SIZE + 4 + name_size + 4;
	path = calloc(1, total);
	if (!path) {
		free(name);
		return -ENOMEM;
	}
	p = path;
	p[0] = DP_MEDIA, p[1] = DP_MEDIA_HD;
	put_le16(p + 2, HD_NODE_SIZE);
	put_le32(p + 4, hd->partition_number);
	put_le64(p + 8, hd->start_lba);
	put_le64(p + 16, hd->size_lba);
	memcpy(p + 24, hd->partition_guid, 16);
	p[40] = HD_FORMAT_GPT, p[41] = HD_SIGNATURE_GUID;
	p += HD_NODE_SIZE;
	p[0] = DP_MEDIA, p[1] = DP_MEDIA_FILE;
	put_le16(p + 2, (uint16_t)(4 + name_size));
	memcpy(p + 4, name, name_size);
	p += 4 + name_size;
	p[0] = DP_END, p[1] = DP_END_ENTIRE;
	put_le16(p + 2, 4);
	free(name);
	*out = path;
	*size = total;
	return 0;
}

/* ---- EFI_LOAD_OPTION ---- */

int bci_efi_load_option_parse(const uint8_t *data, size_t size,
			      struct bci_efi_load_option *option)
{
	size_t offset = 6, file_path_size;
	int ret;

	memset(option, 0, sizeof(*option));
	if (size < 6)
		return -EINVAL;
	option->attributes = get_le32(data);
	file_path_size = get_le16(data + 4);
	/* The description is NUL-terminated UTF-16 of any length: find its end. */
	while (offset + 2 <= size && get_le16(data + offset) != 0)
		offset += 2;
	if (offset + 2 > size)
		return -EINVAL;
	if (file_path_size > size - (offset + 2))
		return -EINVAL;
	ret = bci_efi_utf16_to_utf8(data + 6, (offset - 6) / 2, &option->description);
	if (ret < 0)
		return ret;
	offset += 2;
	option->file_path = data + offset;
	option->file_path_size = file_path_size;
	offset += file_path_size;
	option->optional_data_size = size - offset;
	option->optional_data = option->optional_data_size ? data + offset : NULL;
	return 0;
}

void bci_efi_load_option_clear(struct bci_efi_load_option *option)
{
	free(option->description);
	memset(option, 0, sizeof(*option));
}

int bci_efi_load_option_build(const struct bci_efi_load_option *option, uint8_t **out,
			      size_t *size)
{
	uint8_t *description = NULL, *buf;
	size_t description_size = 0, total;
	int ret;

	if (option->file_path_size > UINT16_MAX)
		return -E2BIG;
	ret = bci_efi_utf8_to_utf16(option->description ? option->description : "", &description,
				    &description_size);
	if (ret < 0)
		return ret;
	total = 6 + description_size + option->file_path_size + option->optional_data_size;
	buf = malloc(total);
	if (!buf) {
		free(description);
		return -ENOMEM;
	}
	put_le32(buf, option->attributes);
	put_le16(buf + 4, (uint16_t)option->file_path_size);
	memcpy(buf + 6, description, description_size);
	if (option->file_path_size)
		memcpy(buf + 6 + description_size, option->file_path, option->file_path_size);
	if (option->optional_data_size)
		memcpy(buf + 6 + description_size + option->file_path_size, option->optional_data,
		       option->optional_data_size);
	free(description);
	*out = buf;
	*size = total;
	return 0;
}

/* ---- the boot manager's variables ---- */

int bci_efi_boot_number_parse(const char *text, uint16_t *number)
{
	unsigned value = 0;

	if (strncasecmp(text, "Boot", 4) != 0 || strlen(text) != 8)
		return -EINVAL;
	for (int i = 4; i < 8; i++) {
		int digit = hex_value(text[i]);
		if (digit < 0)
			return -EINVAL;
		value = value << 4 | (unsigned)digit;
	}
	*number = (uint16_t)value;
	return 0;
}

static void boot_name(uint16_t number, char name[9])
{
	snprintf(name, 9, "Boot%04X", number);
}

int bci_efi_boot_entry_get(const struct bci_executor *ex, uint16_t number,
			   struct bci_efi_load_option *option, uint8_t **raw, size_t *raw_size)
{
	char name[9];
	int ret;

	boot_name(number, name);
	ret = bci_efivar_get(ex, name, BCI_EFI_GLOBAL_GUID, NULL, raw, raw_size);
	if (ret < 0)
		return ret;
	ret = bci_efi_load_option_parse(*raw, *raw_size, option);
	if (ret < 0) {
		free(*raw);
		*raw = NULL;
	}
	return ret;
}

int bci_efi_boot_entry_set(const struct bci_executor *ex, uint16_t number,
			   const struct bci_efi_load_option *option)
{
	uint8_t *body = NULL;
	size_t size = 0;
	char name[9];
	int ret;

	ret = bci_efi_load_option_build(option, &body, &size);
	if (ret < 0)
		return ret;
	boot_name(number, name);
	ret = bci_efivar_set(ex, name, BCI_EFI_GLOBAL_GUID, BCI_EFI_VARIABLE_BOOT_ATTRIBUTES, body,
			     size);
	free(body);
	return ret;
}

static int compare_numbers(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

int bci_efi_boot_entries(const struct bci_executor *ex, uint16_t **numbers, size_t *count)
{
	char path[PATH_MAX];
	uint16_t *list = NULL;
	size_t used = 0, allocated = 0;
	struct dirent *entry;
	DIR *dir;
	int ret;

	ret = bci_path(ex, path, BCI_EFIVARS_DIR);
	if (ret < 0)
		return ret;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ENODEV : -errno;
	while ((entry = readdir(dir))) {
		char name[9];
		uint16_t number;

		/* "Boot####-<guid>": 8 + 1 + 36 characters, and the global GUID. */
		if (strlen(entry->d_name) != 45 || entry->d_name[8] != '-' ||
		    strcasecmp(entry->d_name + 9, BCI_EFI_GLOBAL_GUID) != 0)
			continue;
		memcpy(name, entry->d_name, 8);
		name[8] = '\0';
		if (bci_efi_boot_number_parse(name, &number) < 0)
			continue;
		if (used == allocated) {
			uint16_t *bigger;
			allocated = allocated ? 2 * allocated : 16;
			bigger = realloc(list, allocated * sizeof(*list));
			if (!bigger) {
				ret = -ENOMEM;
				goto out;
			}
			list = bigger;
		}
		list[used++] = number;
	}
	if (used)
		qsort(list, used, sizeof(*list), compare_numbers);
	*numbers = list;
	*count = used;
	list = NULL;
	ret = 0;
out:
	free(list);
	closedir(dir);
	return ret;
}

int bci_efi_boot_entry_free_number(const struct bci_executor *ex, uint16_t *number)
{
	uint16_t *list = NULL;
	size_t count = 0;
	unsigned candidate = 0;
	int ret;

	ret = bci_efi_boot_entries(ex, &list, &count);
	if (ret < 0)
		return ret;
	/* The list is sorted: the first gap is the lowest free number. */
	for (size_t i = 0; i < count && list[i] == candidate; i++)
		candidate++;
	free(list);
	if (candidate > UINT16_MAX)
		return -ENOSPC;
	*number = (uint16_t)candidate;
	return 0;
}

int bci_efi_boot_order_get(const struct bci_executor *ex, uint16_t **order, size_t *count)
{
	uint8_t *data = NULL;
	uint16_t *list;
	size_t size = 0;
	int ret;

	ret = bci_efivar_get(ex, "BootOrder", BCI_EFI_GLOBAL_GUID, NULL, &data, &size);
	if (ret < 0)
		return ret;
	if (size % 2) {
		free(data);
		return -EINVAL;
	}
	list = malloc(size ? size : 1);
	if (!list) {
		free(data);
		return -ENOMEM;
	}
	for (size_t i = 0; i < size / 2; i++)
		list[i] = get_le16(data + 2 * i);
	free(data);
	*order = list;
	*count = size / 2;
	return 0;
}

int bci_efi_boot_order_set(const struct bci_executor *ex, const uint16_t *order, size_t count)
{
	uint8_t *data = malloc(count ? 2 * count : 1);
	int ret;

	if (!data)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		put_le16(data + 2 * i, order[i]);
	ret = bci_efivar_set(ex, "BootOrder", BCI_EFI_GLOBAL_GUID, BCI_EFI_VARIABLE_BOOT_ATTRIBUTES,
			     data, 2 * count);
	free(data);
	return ret;
}

static int get_u16_variable(const struct bci_executor *ex, const char *name, uint16_t *number)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int ret;

	ret = bci_efivar_get(ex, name, BCI_EFI_GLOBAL_GUID, NULL, &data, &size);
	if (ret < 0)
		return ret;
	if (size == 2)
		*number = get_le16(data);
	else
		ret = -EINVAL;
	free(data);
	return ret;
}

int bci_efi_boot_next_get(const struct bci_executor *ex, uint16_t *number)
{
	return get_u16_variable(ex, "BootNext", number);
}

int bci_efi_boot_current_get(const struct bci_executor *ex, uint16_t *number)
{
	return get_u16_variable(ex, "BootCurrent", number);
}

int bci_efi_boot_next_set(const struct bci_executor *ex, uint16_t number)
{
	uint8_t data[2];

	put_le16(data, number);
	return bci_efivar_set(ex, "BootNext", BCI_EFI_GLOBAL_GUID, BCI_EFI_VARIABLE_BOOT_ATTRIBUTES,
			      data, sizeof(data));
}

/* Does Boot@number exist and carry @description? */
static bool entry_has_description(const struct bci_executor *ex, uint16_t number,
				  const char *description)
{
	struct bci_efi_load_option option;
	uint8_t *raw = NULL;
	size_t raw_size = 0;
	bool match;

	if (bci_efi_boot_entry_get(ex, number, &option, &raw, &raw_size) < 0)
		return false;
	match = strcmp(option.description, description) == 0;
	bci_efi_load_option_clear(&option);
	free(raw);
	return match;
}

int bci_efi_boot_find(const struct bci_executor *ex, const char *what, uint16_t *number)
{
	uint16_t *order = NULL, *entries = NULL;
	size_t order_count = 0, entry_count = 0;
	uint16_t parsed;
	int ret;

	if (bci_efi_boot_number_parse(what, &parsed) == 0) {
		char name[9];
		uint8_t *data = NULL;
		size_t size;

		boot_name(parsed, name);
		ret = bci_efivar_get(ex, name, BCI_EFI_GLOBAL_GUID, NULL, &data, &size);
		free(data);
		if (ret == 0)
			*number = parsed;
		return ret;
	}
	/* BootOrder first: what the firmware itself would try first wins a tie. */
	if (bci_efi_boot_order_get(ex, &order, &order_count) < 0)
		order_count = 0;
	for (size_t i = 0; i < order_count; i++) {
		if (entry_has_description(ex, order[i], what)) {
			*number = order[i];
			ret = 0;
			goto out;
		}
	}
	ret = bci_efi_boot_entries(ex, &entries, &entry_count);
	if (ret < 0)
		goto out;
	ret = -ENOENT;
	for (size_t i = 0; i < entry_count; i++) {
		if (entry_has_description(ex, entries[i], what)) {
			*number = entries[i];
			ret = 0;
			break;
		}
	}
out:
	free(order);
	free(entries);
	return ret;
}

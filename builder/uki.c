// SPDX-License-Identifier: MIT
#include "uki.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "tool.h"

#define PE_PAGE 0x1000u

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Offset of the "PE\0\0" signature, or -EINVAL. */
static long pe_header(const uint8_t *buf, size_t len)
{
	uint32_t at;

	if (len < 0x40 || buf[0] != 'M' || buf[1] != 'Z')
		return -EINVAL;
	at = le32(buf + 0x3c);
	if ((uint64_t)at + 24 + 96 > len || memcmp(buf + at, "PE\0\0", 4))
		return -EINVAL;
	return at;
}

int builder_pe_set_timestamp(uint8_t *buf, size_t len, uint32_t stamp)
{
	long pe = pe_header(buf, len);
	size_t checksum_at;
	uint64_t sum = 0;

	if (pe < 0)
		return (int)pe;
	put32(buf + pe + 8, stamp);
	/* Optional header right after the 20-byte COFF header; CheckSum at +64 (PE32 and PE32+). */
	checksum_at = (size_t)pe + 24 + 64;
	put32(buf + checksum_at, 0);
	/* The PE checksum: 16-bit one's-complement-style sum with carries folded, plus the length. */
	for (size_t i = 0; i + 1 < len; i += 2) {
		sum += le16(buf + i);
		sum = (sum & 0xffff) + (sum >> 16);
	}
	if (len & 1) {
		sum += buf[len - 1];
		sum = (sum & 0xffff) + (sum >> 16);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	put32(buf + checksum_at, (uint32_t)(sum + len));
	return 0;
}

int builder_pe_end_address(const uint8_t *buf, size_t len, uint64_t *end)
{
	long pe = pe_header(buf, len);
	uint16_t magic;
	uint64_t image_base, size_of_image;
	const uint8_t *opt;

	if (pe < 0)
		return (int)pe;
	opt = buf + pe + 24;
	magic = le16(opt);
	if (magic == 0x20b)
		image_base = le64(opt + 24);
	else if (magic == 0x10b)
		image_base = le32(opt + 28);
	else
		return -EINVAL;
	size_of_image = le32(opt + 56);
	*end = image_base + ((size_of_image + PE_PAGE - 1) & ~(uint64_t)(PE_PAGE - 1));
	return 0;
}

static int uki_file_size(const char *path, uint64_t *size, struct builder_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		builder_error_set(err, "%s: %s", path, strerror(errno));
		return -errno;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Maps @path read-write, applies @fn's change, writes it back. */
static int uki_patch(const char *path, uint32_t stamp, struct builder_error *err)
{
	struct stat st;
	uint8_t *map;
	int fd, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		builder_error_set(err, "%s: %s", path, strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		builder_error_set(err, "%s: %s", path, strerror(-ret));
		close(fd);
		return ret;
	}
	ret = builder_pe_set_timestamp(map, (size_t)st.st_size, stamp);
	if (ret < 0)
		builder_error_set(err, "%s: objcopy did not write a PE image", path);
	if (msync(map, (size_t)st.st_size, MS_SYNC) < 0 && !ret)
		ret = -errno;
	munmap(map, (size_t)st.st_size);
	close(fd);
	return ret;
}

int builder_uki_make(const struct builder_uki *uki, const char *out, struct builder_error *err)
{
	const char *stub = uki->stub ? uki->stub : BUILDER_UKI_STUB;
	char *osrel = NULL, *cmdline = NULL, *stub_text = NULL;
	char arg[8][PATH_MAX + 64];
	uint64_t vma, size = 0;
	size_t stub_len;
	int ret;

	ret = bci_read_file(stub, &stub_text, &stub_len, 16 * 1024 * 1024);
	if (ret < 0) {
		builder_error_set(err, "EFI stub %s: %s (Debian package systemd-boot-efi)", stub,
				  strerror(-ret));
		return ret;
	}
	ret = builder_pe_end_address((const uint8_t *)stub_text, stub_len, &vma);
	free(stub_text);
	if (ret < 0) {
		builder_error_set(err, "EFI stub %s: not a PE image", stub);
		return ret;
	}
	if (asprintf(&osrel, "%s/uki-osrel", uki->work_dir) < 0 ||
	    asprintf(&cmdline, "%s/uki-cmdline", uki->work_dir) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_write_file_atomic(osrel, uki->osrel, strlen(uki->osrel), 0644);
	/* The stub reads the section as text; the NUL ends it cleanly. */
	if (!ret)
		ret = bci_write_file_atomic(cmdline, uki->cmdline, strlen(uki->cmdline) + 1, 0644);
	if (ret < 0) {
		builder_error_set(err, "%s: %s", uki->work_dir, strerror(-ret));
		goto out;
	}
	{
		const char *sections[4][2] = {
			{ ".osrel", osrel }, { ".cmdline", cmdline },
			{ ".linux", uki->kernel }, { ".initrd", uki->initrd },
		};
		const char *argv[20];
		int n = 0;

		argv[n++] = "objcopy";
		for (int i = 0; i < 4; i++) {
			ret = uki_file_size(sections[i][1], &size, err);
			if (ret < 0)
				goto out;
			snprintf(arg[2 * i], sizeof(arg[0]), "%s=%s", sections[i][0], sections[i][1]);
			snprintf(arg[2 * i + 1], sizeof(arg[0]), "%s=0x%llx", sections[i][0],
				 (unsigned long long)vma);
			argv[n++] = "--add-section";
			argv[n++] = arg[2 * i];
			argv[n++] = "--change-section-vma";
			argv[n++] = arg[2 * i + 1];
			vma += (size + PE_PAGE - 1) & ~(uint64_t)(PE_PAGE - 1);
		}
		argv[n++] = stub;
		argv[n++] = out;
		argv[n] = NULL;
		ret = builder_tool_run(argv, NULL, 1, NULL, err);
	}
	if (!ret)
		ret = uki_patch(out, (uint32_t)uki->epoch, err);
out:
	if (osrel)
		unlink(osrel);
	if (cmdline)
		unlink(cmdline);
	free(osrel);
	free(cmdline);
	return ret;
}

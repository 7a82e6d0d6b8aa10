// SPDX-License-Identifier: MIT
/*
 * The environment of the kernel under test, recorded at every boot into the
 * boot's folder (format: lib/machine_env.h), so that a result can be told
 * apart by the machine, firmware, devices and kernel configuration it ran on.
 * Every read goes through the root prefix; nothing here is fatal to the run.
 */
#include "executor.h"
#include "machine.h"

#include "fsutil.h"
#include "machine_env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* A decompressed .config is about 250 KiB; a kernel with a far larger one is broken. */
#define CONFIG_MAX (32u << 20)
/* How much of the kernel log is searched for firmware requests (it is a ring of a few MiB). */
#define KMSG_MAX (64u << 20)

static const struct {
	enum bci_machine_env_field field;
	const char *file;
} dmi_files[] = {
	{ BCI_ENV_DMI_SYS_VENDOR, "sys_vendor" },
	{ BCI_ENV_DMI_PRODUCT_NAME, "product_name" },
	{ BCI_ENV_DMI_PRODUCT_VERSION, "product_version" },
	{ BCI_ENV_DMI_BOARD_VENDOR, "board_vendor" },
	{ BCI_ENV_DMI_BOARD_NAME, "board_name" },
	{ BCI_ENV_DMI_BOARD_VERSION, "board_version" },
	{ BCI_ENV_DMI_BIOS_VENDOR, "bios_vendor" },
	{ BCI_ENV_DMI_BIOS_VERSION, "bios_version" },
	{ BCI_ENV_DMI_BIOS_DATE, "bios_date" },
};

/* ROOT/@path read whole into *@text (caller frees); -errno when it cannot be. */
static int read_rooted(const struct bci_executor *ex, const char *path, char **text, size_t max)
{
	char full[PATH_MAX];
	int ret = bci_path(ex->root, full, "%s", path);

	return ret < 0 ? ret : bci_read_file(full, text, NULL, max);
}

static void trim_end(char *text)
{
	size_t len = strlen(text);

	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\t'))
		text[--len] = '\0';
}

/* Sets @field from ROOT/@path (trailing white space removed) when the file is there. */
static int set_from_file(const struct bci_executor *ex, struct bci_machine_env *env,
			 enum bci_machine_env_field field, const char *path)
{
	char *text;
	int ret;

	if (read_rooted(ex, path, &text, 1 << 16) < 0)
		return 0;
	trim_end(text);
	ret = bci_machine_env_set(env, field, text);
	free(text);
	return ret == -EINVAL ? 0 : ret;
}

static int collect_dmi(const struct bci_executor *ex, struct bci_machine_env *env)
{
	char path[128];
	int ret = 0;

	for (size_t i = 0; i < sizeof(dmi_files) / sizeof(dmi_files[0]) && ret == 0; i++) {
		snprintf(path, sizeof(path), "/sys/class/dmi/id/%s", dmi_files[i].file);
		ret = set_from_file(ex, env, dmi_files[i].field, path);
	}
	return ret;
}

/* cpu.model (the first "model name") and cpu.count ("processor" entries) of /proc/cpuinfo. */
static int collect_cpu(const struct bci_executor *ex, struct bci_machine_env *env)
{
	char *text, *line, *save = NULL, count[24];
	unsigned long processors = 0;
	int ret = 0;

	if (read_rooted(ex, "/proc/cpuinfo", &text, 16 << 20) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line && ret == 0; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		size_t key_len;

		if (!colon)
			continue;
		key_len = (size_t)(colon - line);
		while (key_len > 0 && (line[key_len - 1] == ' ' || line[key_len - 1] == '\t'))
			key_len--;
		if (key_len == 9 && strncmp(line, "processor", 9) == 0) {
			processors++;
		} else if (key_len == 10 && strncmp(line, "model name", 10) == 0 &&
			   !env->fields[BCI_ENV_CPU_MODEL]) {
			char *value = colon + 1 + strspn(colon + 1, " \t");
			trim_end(value);
			ret = bci_machine_env_set(env, BCI_ENV_CPU_MODEL, value);
		}
	}
	free(text);
	if (ret == 0 && processors > 0) {
		snprintf(count, sizeof(count), "%lu", processors);
		ret = bci_machine_env_set(env, BCI_ENV_CPU_COUNT, count);
	}
	return ret;
}

static int collect_memory(const struct bci_executor *ex, struct bci_machine_env *env)
{
	unsigned long long kib;
	char *text, *line, number[24];
	int ret = 0;

	if (read_rooted(ex, "/proc/meminfo", &text, 1 << 20) < 0)
		return 0;
	line = strstr(text, "MemTotal:");
	if (line && (line == text || line[-1] == '\n') &&
	    sscanf(line, "MemTotal: %llu kB", &kib) == 1) {
		snprintf(number, sizeof(number), "%llu", kib);
		ret = bci_machine_env_set(env, BCI_ENV_MEMORY_KIB, number);
	}
	free(text);
	return ret;
}

/* A PCI id file ("0x8086\n"): its value, or -1 when missing or not a number up to @max. */
static long pci_id(const struct bci_executor *ex, const char *slot, const char *name, long max)
{
	char path[PATH_MAX], *text, *end;
	long value;

	if (snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", slot, name) >=
	    (int)sizeof(path) || read_rooted(ex, path, &text, 64) < 0)
		return -1;
	errno = 0;
	value = strtol(text, &end, 16);
	if (errno || end == text || (*end && *end != '\n') || value < 0 || value > max)
		value = -1;
	free(text);
	return value;
}

/* The driver bound to @slot (the last part of its driver link) into @driver; "" when none. */
static void pci_driver(const struct bci_executor *ex, const char *slot, char *driver, size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	driver[0] = '\0';
	if (bci_path(ex->root, path, "/sys/bus/pci/devices/%s/driver", slot) < 0)
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	const char *name = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	if (strlen(name) < size)
		memcpy(driver, name, strlen(name) + 1);
}

static int collect_pci(const struct bci_executor *ex, struct bci_machine_env *env)
{
	char dir[PATH_MAX], driver[256];
	struct dirent **names;
	int n, ret = 0;

	if (bci_path(ex->root, dir, "/sys/bus/pci/devices") < 0)
		return 0;
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *slot = names[i]->d_name;
		struct bci_pci_function f = { .slot = (char *)slot };
		long vendor, device, class_code, subsystem_vendor, subsystem_device, revision;

		if (ret < 0 || slot[0] == '.')
			goto next;
		vendor = pci_id(ex, slot, "vendor", 0xffff);
		device = pci_id(ex, slot, "device", 0xffff);
		class_code = pci_id(ex, slot, "class", 0xffffff);
		if (vendor < 0 || device < 0 || class_code < 0) {
			bci_warn("PCI function %s: no readable vendor, device or class; not recorded",
				 slot);
			goto next;
		}
		f.vendor = (unsigned)vendor;
		f.device = (unsigned)device;
		f.class_code = (unsigned)class_code;
		/* Missing on some bridges and old kernels: 0, as lspci shows them. */
		subsystem_vendor = pci_id(ex, slot, "subsystem_vendor", 0xffff);
		subsystem_device = pci_id(ex, slot, "subsystem_device", 0xffff);
		revision = pci_id(ex, slot, "revision", 0xff);
		f.subsystem_vendor = subsystem_vendor < 0 ? 0 : (unsigned)subsystem_vendor;
		f.subsystem_device = subsystem_device < 0 ? 0 : (unsigned)subsystem_device;
		f.revision = revision < 0 ? 0 : (unsigned)revision;
		pci_driver(ex, slot, driver, sizeof(driver));
		f.driver = driver[0] ? driver : NULL;
		ret = bci_machine_env_add_pci(env, &f);
		if (ret == -EINVAL) {
			bci_warn("PCI function %s: a name or driver the record cannot hold; not recorded",
				 slot);
			ret = 0;
		}
next:
		free(names[i]);
	}
	free(names);
	return ret;
}

/* The first word of each line of /proc/modules. */
static int collect_modules(const struct bci_executor *ex, struct bci_machine_env *env)
{
	char *text, *line, *save = NULL;
	int ret = 0;

	if (read_rooted(ex, "/proc/modules", &text, 16 << 20) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line && ret >= 0; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " ")] = '\0';
		ret = bci_machine_env_add_module(env, line);
		if (ret == -EINVAL)
			ret = 0;
	}
	free(text);
	return ret;
}

/* Each complete line of @buf (@len bytes) checked for a firmware request; returns the bytes used. */
static size_t firmware_lines(struct bci_machine_env *env, const char *buf, size_t len, int *ret)
{
	char name[256];
	size_t used = 0;
	int error;

	for (;;) {
		const char *newline = memchr(buf + used, '\n', len - used);
		if (!newline)
			return used;
		size_t line_len = (size_t)(newline - (buf + used));
		/* " KEY=value" lines continue a record (device properties): no messages there. */
		if (buf[used] != ' ' &&
		    bci_machine_env_firmware_line(buf + used, line_len, name, sizeof(name), &error) == 1 &&
		    *ret == 0)
			*ret = bci_machine_env_add_firmware(env, name, error);
		used += line_len + 1;
	}
}

/*
 * The firmware requests the kernel log holds, from its start. /dev/kmsg gives one
 * record per read; a fake tree's file gives lines in chunks: lines are cut out of
 * whatever the reads return.
 */
static int collect_firmware(const struct bci_executor *ex, struct bci_machine_env *env)
{
	char path[PATH_MAX], buf[16384];
	size_t have = 0, total = 0;
	int fd, ret = 0;

	if (bci_path(ex->root, path, "/dev/kmsg") < 0)
		return 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (ret == 0 && total < KMSG_MAX) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have - 1);
		if (n < 0 && (errno == EINTR || errno == EPIPE))
			continue;       /* EPIPE: records overwritten meanwhile; on from the oldest */
		if (n <= 0)
			break;
		have += (size_t)n;
		total += (size_t)n;
		size_t used = firmware_lines(env, buf, have, &ret);
		if (used == 0 && have == sizeof(buf) - 1)
			used = have;    /* a line longer than any record: skip it */
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	if (have > 0 && ret == 0) {
		buf[have++] = '\n';
		firmware_lines(env, buf, have, &ret);
	}
	close(fd);
	return ret == -EINVAL ? 0 : ret;
}

/* ROOT/proc/config.gz decompressed into *@config; 0 (NULL when there is none) or -errno. */
static int read_config(const struct bci_executor *ex, char **config, size_t *len)
{
	char path[PATH_MAX], *buf = NULL;
	size_t cap = 0, used = 0;
	gzFile gz;
	int fd, ret = 0;

	*config = NULL;
	*len = 0;
	if (bci_path(ex->root, path, "/proc/config.gz") < 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (cap - used < 65536) {
			char *bigger;
			if (cap >= CONFIG_MAX) {
				ret = -EFBIG;
				break;
			}
			cap = cap ? cap * 2 : 262144;
			bigger = realloc(buf, cap);
			if (!bigger) {
				ret = -ENOMEM;
				break;
			}
			buf = bigger;
		}
		int n = gzread(gz, buf + used, 65536);
		if (n < 0) {
			int zerr;
			bci_warn("/proc/config.gz: %s", gzerror(gz, &zerr));
			ret = -EIO;
			break;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (ret == 0) {
		int zerr;
		const char *message = gzerror(gz, &zerr);
		/* A stream cut short ends like a whole one, but with Z_BUF_ERROR set. */
		if (zerr != Z_OK || gzdirect(gz)) {
			bci_warn("/proc/config.gz: %s", gzdirect(gz) ? "not gzip data" : message);
			ret = -EIO;
		}
	}
	gzclose(gz);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*config = buf ? buf : strdup("");
	*len = used;
	return *config ? 0 : -ENOMEM;
}

int bci_environment_collect(const struct bci_executor *ex, struct bci_machine_env **out,
			    char **config, size_t *config_len)
{
	struct bci_machine_env *env;
	int ret;

	*config = NULL;
	*config_len = 0;
	ret = bci_machine_env_new(&env);
	if (ret < 0)
		return ret;
	ret = collect_dmi(ex, env);
	if (ret == 0)
		ret = collect_cpu(ex, env);
	if (ret == 0)
		ret = collect_memory(ex, env);
	if (ret == 0 && ex->release[0])
		ret = bci_machine_env_set(env, BCI_ENV_KERNEL_RELEASE, ex->release);
	if (ret == 0)
		ret = set_from_file(ex, env, BCI_ENV_KERNEL_CMDLINE, "/proc/cmdline");
	if (ret == 0)
		ret = collect_pci(ex, env);
	if (ret == 0)
		ret = collect_modules(ex, env);
	if (ret == 0)
		ret = collect_firmware(ex, env);
	if (ret == 0) {
		int config_ret = read_config(ex, config, config_len);
		/* A .config that cannot be read is a gap in the record, not a reason to stop. */
		if (config_ret < 0 && config_ret != -ENOMEM)
			bci_warn("cannot read /proc/config.gz: %s", strerror(-config_ret));
		else if (config_ret == -ENOMEM)
			ret = config_ret;
		else if (*config)
			ret = bci_machine_env_set(env, BCI_ENV_KERNEL_CONFIG, BCI_MACHINE_ENV_CONFIG_FILE);
	}
	if (ret < 0) {
		free(*config);
		*config = NULL;
		bci_machine_env_free(env);
		return ret;
	}
	*out = env;
	return 0;
}

int bci_environment_record(struct bci_executor *ex)
{
	struct bci_machine_env *env;
	char *config, err[PATH_MAX + 256];
	size_t config_len;
	int ret;

	if (!ex->boot_dir[0])
		return -ENOENT;
	ret = bci_environment_collect(ex, &env, &config, &config_len);
	if (ret < 0) {
		bci_error("cannot collect the machine's environment: %s", strerror(-ret));
		return ret;
	}
	ret = bci_machine_env_write(ex->boot_dir, env, config, config_len, err, sizeof(err));
	if (ret < 0)
		bci_error("%s", err);
	else
		bci_say("environment recorded in boot-%04u/%s: %zu PCI functions, %zu modules, "
			"%zu firmware requests%s",
			ex->boot_number, BCI_MACHINE_ENV_FILE, env->pci_count, env->module_count,
			env->firmware_count, config ? ", kernel .config" : "");
	free(config);
	bci_machine_env_free(env);
	return ret;
}

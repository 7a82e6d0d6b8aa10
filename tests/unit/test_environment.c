// SPDX-License-Identifier: MIT
/*
 * What a boot records about its machine: lib/machine_env.c (the format, its
 * writer and reader) and executor/environment.c (the executor collecting it
 * from /sys and /proc of a fake root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "fakeroot.h"
#include "fakesys.h"
#include "fsutil.h"
#include "machine.h"
#include "machine_env.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char *make_dir(void)
{
	char *dir = strdup("/tmp/bootci-env.XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_dir(char *dir)
{
	assert_int_equal(bci_remove_tree(dir), 0);
	free(dir);
}

/* Names in @dir other than . and .., sorted, joined by spaces. */
static const char *dir_listing(const char *dir)
{
	static char listing[1024];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	listing[0] = '\0';
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0) {
			if (listing[0])
				strcat(listing, " ");
			strcat(listing, names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	return listing;
}

static struct bci_machine_env *sample_env(void)
{
	struct bci_machine_env *env;
	struct bci_pci_function vga = {
		.slot = "0000:00:02.0", .vendor = 0x1234, .device = 0x1111,
		.subsystem_vendor = 0x1af4, .subsystem_device = 0x1100,
		.class_code = 0x030000, .revision = 0x02, .driver = "bochs-drm",
	};
	struct bci_pci_function bridge = {
		.slot = "0000:00:00.0", .vendor = 0x8086, .device = 0x1237,
		.class_code = 0x060000,
	};

	/* Driver names are free text. */
	struct bci_pci_function watchdog = {
		.slot = "0000:00:03.0", .vendor = 0x8086, .device = 0x25ab,
		.subsystem_vendor = 0x1af4, .subsystem_device = 0x1100,
		.class_code = 0x088000, .driver = "i6300ESB timer",
	};

	assert_int_equal(bci_machine_env_new(&env), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_DMI_SYS_VENDOR, "QEMU"), 0);
	/* Vendors put anything in DMI strings: escapes must carry it. */
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_DMI_BOARD_NAME, "a\tb\\c\x1b" "d\nnext"), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_DMI_BIOS_DATE, "04/01/2014"), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_CPU_MODEL, "QEMU Virtual CPU version 2.5+"), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_CPU_COUNT, "2"), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_MEMORY_KIB, "1010052"), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_KERNEL_CMDLINE, "console=ttyS0 quiet"), 0);
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_KERNEL_CONFIG, "kernel.config"), 0);
	assert_int_equal(bci_machine_env_add_pci(env, &bridge), 0);
	assert_int_equal(bci_machine_env_add_pci(env, &vga), 0);
	assert_int_equal(bci_machine_env_add_pci(env, &watchdog), 0);
	assert_int_equal(bci_machine_env_add_module(env, "bochs"), 0);
	assert_int_equal(bci_machine_env_add_module(env, "ext4"), 0);
	assert_int_equal(bci_machine_env_add_firmware(env, "i915/kbl_dmc.bin", 0), 0);
	assert_int_equal(bci_machine_env_add_firmware(env, "regulatory.db", -2), 0);
	return env;
}

static const char sample_text[] =
	"format 1\n"
	"dmi.sys_vendor QEMU\n"
	"dmi.board_name a\\tb\\\\c\\x1bd\\nnext\n"
	"dmi.bios_date 04/01/2014\n"
	"cpu.model QEMU Virtual CPU version 2.5+\n"
	"cpu.count 2\n"
	"memory.kib 1010052\n"
	"kernel.cmdline console=ttyS0 quiet\n"
	"kernel.config kernel.config\n"
	"pci 0000:00:00.0 8086:1237 0000:0000 060000 00 -\n"
	"pci 0000:00:02.0 1234:1111 1af4:1100 030000 02 bochs-drm\n"
	"pci 0000:00:03.0 8086:25ab 1af4:1100 088000 00 i6300ESB timer\n"
	"module bochs\n"
	"module ext4\n"
	"firmware ok i915/kbl_dmc.bin\n"
	"firmware -2 regulatory.db\n";

static void writer_formats_the_documented_lines(void **state)
{
	struct bci_machine_env *env = sample_env();
	size_t len;
	char *text;

	(void)state;
	assert_int_equal(bci_machine_env_format(env, &text, &len), 0);
	assert_string_equal(text, sample_text);
	assert_int_equal(len, strlen(sample_text));
	free(text);
	bci_machine_env_free(env);
}

static void write_then_read_gives_the_same_environment(void **state)
{
	struct bci_machine_env *env = sample_env(), *back;
	char *dir = make_dir(), err[512], path[PATH_MAX];
	static const char config[] = "CONFIG_DRM=m\n# CONFIG_DEBUG is not set\n";

	(void)state;
	assert_int_equal(bci_machine_env_write(dir, env, config, strlen(config), err, sizeof(err)), 0);
	/* Only the two files: the temporaries were renamed over them. */
	assert_string_equal(dir_listing(dir), "environment.txt kernel.config");
	snprintf(path, sizeof(path), "%s/kernel.config", dir);
	char *text;
	size_t len;
	assert_int_equal(bci_read_file(path, &text, &len, 1 << 20), 0);
	assert_string_equal(text, config);
	free(text);

	assert_int_equal(bci_machine_env_read(dir, &back, err, sizeof(err)), 0);
	for (size_t i = 0; i < BCI_ENV_FIELD_COUNT; i++) {
		if (!env->fields[i])
			assert_null(back->fields[i]);
		else
			assert_string_equal(back->fields[i], env->fields[i]);
	}
	assert_string_equal(back->fields[BCI_ENV_DMI_BOARD_NAME], "a\tb\\c\x1b" "d\nnext");
	assert_int_equal(back->pci_count, 3);
	assert_string_equal(back->pci[2].driver, "i6300ESB timer");
	assert_string_equal(back->pci[1].slot, "0000:00:02.0");
	assert_int_equal(back->pci[1].vendor, 0x1234);
	assert_int_equal(back->pci[1].device, 0x1111);
	assert_int_equal(back->pci[1].subsystem_vendor, 0x1af4);
	assert_int_equal(back->pci[1].subsystem_device, 0x1100);
	assert_int_equal(back->pci[1].class_code, 0x030000);
	assert_int_equal(back->pci[1].revision, 2);
	assert_string_equal(back->pci[1].driver, "bochs-drm");
	assert_null(back->pci[0].driver);
	assert_int_equal(back->module_count, 2);
	assert_string_equal(back->modules[1], "ext4");
	assert_int_equal(back->firmware_count, 2);
	assert_string_equal(back->firmware[0].name, "i915/kbl_dmc.bin");
	assert_int_equal(back->firmware[0].error, 0);
	assert_int_equal(back->firmware[1].error, -2);
	bci_machine_env_free(back);

	/* Written again (the same boot's record remade): replaced whole, nothing left beside it. */
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_CPU_COUNT, "8"), 0);
	assert_int_equal(bci_machine_env_write(dir, env, config, strlen(config), err, sizeof(err)), 0);
	assert_string_equal(dir_listing(dir), "environment.txt kernel.config");
	assert_int_equal(bci_machine_env_read(dir, &back, err, sizeof(err)), 0);
	assert_string_equal(back->fields[BCI_ENV_CPU_COUNT], "8");
	bci_machine_env_free(back);
	bci_machine_env_free(env);
	remove_dir(dir);
}

static void failed_write_leaves_nothing_half_written(void **state)
{
	struct bci_machine_env *env = sample_env();
	char *dir = make_dir(), err[512] = "", path[PATH_MAX];

	(void)state;
	/* kernel.config cannot be replaced (a folder is in the way): environment.txt,
	 * which would name it, is not written, and no temporary stays behind. */
	snprintf(path, sizeof(path), "%s/kernel.config", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/kernel.config/x", dir);
	assert_int_equal(bci_write_file_atomic(path, "x", 1, 0644), 0);
	assert_true(bci_machine_env_write(dir, env, "C=y\n", 4, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "kernel.config"));
	assert_string_equal(dir_listing(dir), "kernel.config");

	/* A .config without the field naming it (or the reverse) is the caller's mistake. */
	assert_int_equal(bci_machine_env_set(env, BCI_ENV_KERNEL_CONFIG, NULL), 0);
	assert_int_equal(bci_machine_env_write(dir, env, "C=y\n", 4, err, sizeof(err)), -EINVAL);
	assert_string_equal(dir_listing(dir), "kernel.config");
	bci_machine_env_free(env);
	remove_dir(dir);
}

static void read_refuses_a_missing_config_it_names(void **state)
{
	struct bci_machine_env *env = sample_env(), *back = NULL;
	char *dir = make_dir(), err[512] = "", path[PATH_MAX];

	(void)state;
	assert_int_equal(bci_machine_env_read(dir, &back, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "environment.txt"));
	assert_int_equal(bci_machine_env_write(dir, env, "C=y\n", 4, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/kernel.config", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(bci_machine_env_read(dir, &back, err, sizeof(err)), -ENOENT);
	assert_null(back);
	assert_non_null(strstr(err, "names kernel.config, which is not a regular file"));
	bci_machine_env_free(env);
	remove_dir(dir);
}

/* parse() of @text fails with an error containing @expected. */
static void refused(const char *text, const char *expected)
{
	struct bci_machine_env *env = NULL;
	char err[512] = "";

	if (bci_machine_env_parse("env.txt", text, strlen(text), &env, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted: %s", text);
	assert_null(env);
	if (!strstr(err, expected))
		fail_msg("error '%s' does not say '%s'", err, expected);
}

static void reader_refuses_bad_lines_naming_them(void **state)
{
	(void)state;
	refused("", "env.txt: empty");
	refused("format 2\n", "env.txt:1: not `format 1`");
	refused("cpu.count 2\n", "env.txt:1: not `format 1`");
	refused("format 1\ncpu.count 2", "env.txt:2: the last line has no newline");
	refused("format 1\ncolour blue\n", "env.txt:2: an unknown key: colour blue");
	refused("format 1\ncpu.count\n", "env.txt:2: a key without a value");
	refused("format 1\ncpu.count 2\ncpu.count 3\n", "env.txt:3: a key given twice");
	refused("format 1\ncpu.count two\n", "env.txt:2: not a decimal number");
	refused("format 1\nmemory.kib 012\n", "not a decimal number");
	refused("format 1\nkernel.config ../../etc/passwd\n", "names another file");
	refused("format 1\ndmi.sys_vendor a\\qb\n", "an unknown escape");
	refused("format 1\ndmi.sys_vendor a\\x0\n", "\\x needs two hex digits");
	refused("format 1\ndmi.sys_vendor a\\x00b\n", "\\x needs two hex digits, not 00");
	refused("format 1\ndmi.sys_vendor a\\\n", "a backslash at the end");
	refused("format 1\ndmi.sys_vendor a\tb\n", "a control byte not escaped");
	refused("format 1\ndmi.sys_vendor a\rb\n", "a control byte not escaped");
	refused("format 1\npci 0000:00:02.0 1234:1111 1af4:1100 030000 02\n", "not SLOT");
	refused("format 1\npci 0000:00:02.0 1234:111 1af4:1100 030000 02 -\n", "not SLOT");
	refused("format 1\npci 0000:00:02.0 1234:1111 1AF4:1100 030000 02 -\n", "not SLOT");
	refused("format 1\npci 00:02.0 1234:1111 1af4:1100 030000 02 -\n", "not SLOT");
	refused("format 1\npci 0000:00:02.0 1234:1111 1af4:1100 0300 02 -\n", "not SLOT");
	refused("format 1\npci 0000:00:02.0 1234:1111 1af4:1100 030000 02 \n", "not SLOT");
	refused("format 1\npci  0000:00:02.0 1234:1111 1af4:1100 030000 02 -\n", "not SLOT");
	refused("format 1\nmodule a\\x20b\n", "a module name with white space");
	refused("format 1\nfirmware maybe x.bin\n", "not `firmware ok|-ERRNO NAME`");
	refused("format 1\nfirmware -0 x.bin\n", "not `firmware ok|-ERRNO NAME`");
	refused("format 1\nfirmware -9999 x.bin\n", "not `firmware ok|-ERRNO NAME`");
	refused("format 1\nfirmware ok\n", "not `firmware ok|-ERRNO NAME`");
}

static void reader_takes_comments_and_absent_keys(void **state)
{
	static const char text[] = "format 1\n# written by hand\ndmi.product_name \n";
	struct bci_machine_env *env;
	char err[512];

	(void)state;
	assert_int_equal(bci_machine_env_parse("x", text, strlen(text), &env, err, sizeof(err)), 0);
	assert_string_equal(env->fields[BCI_ENV_DMI_PRODUCT_NAME], "");
	assert_null(env->fields[BCI_ENV_DMI_SYS_VENDOR]);
	assert_int_equal(env->pci_count + env->module_count + env->firmware_count, 0);
	bci_machine_env_free(env);
}

/* firmware_line() of @line: its result, and the name and error when 1. */
static void firmware(const char *line, int expected, const char *name, int error)
{
	char got[256] = "";
	int got_error = 42;

	assert_int_equal(bci_machine_env_firmware_line(line, strlen(line), got, sizeof(got),
						       &got_error),
			 expected);
	if (expected == 1) {
		assert_string_equal(got, name);
		assert_int_equal(got_error, error);
	}
}

static void firmware_requests_from_the_kernel_log(void **state)
{
	(void)state;
	firmware("i915 0000:00:02.0: firmware: direct-loading firmware i915/kbl_dmc_ver1_04.bin", 1,
		 "i915/kbl_dmc_ver1_04.bin", 0);
	firmware("i915 0000:00:02.0: Direct firmware load for i915/tgl_guc_70.bin failed with error -2",
		 1, "i915/tgl_guc_70.bin", -2);
	firmware("bluetooth hci0: firmware: failed to load rtl_bt/rtl8761b_fw.bin (-110)", 1,
		 "rtl_bt/rtl8761b_fw.bin", -110);
	firmware("platform regulatory.0: Direct firmware load for regulatory.db failed with error -2\n",
		 1, "regulatory.db", -2);
	firmware("i915 0000:00:02.0: [drm] Finished loading DMC firmware", 0, NULL, 0);
	firmware("Direct firmware load for x.bin failed with error", 0, NULL, 0);
	firmware("firmware: failed to load x.bin", 0, NULL, 0);
	firmware("firmware: direct-loading firmware ", 0, NULL, 0);
}

/* ---- the executor collecting it from a fake root ---- */

static const char cpuinfo[] =
	"processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: QEMU Virtual CPU version 2.5+\n"
	"flags\t\t: fpu vme\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n"
	"model name\t: QEMU Virtual CPU version 2.5+\nflags\t\t: fpu vme\n\n";
static const char meminfo[] = "MemTotal:        1010052 kB\nMemFree:          900000 kB\n";
static const char proc_modules[] =
	"bochs 20480 0 - Live 0x0000000000000000\n"
	"drm_vram_helper 24576 1 bochs, Live 0x0000000000000000\n"
	"ext4 987136 1 - Live 0x0000000000000000\n";
/* As /dev/kmsg shows records, with a record's device properties on " KEY=" lines. */
static const char kmsg[] =
	"6,500,1000,-;Linux version 6.1.0\n"
	"7,512,2000,-;i915 0000:00:02.0: firmware: direct-loading firmware i915/kbl_dmc_ver1_04.bin\n"
	" SUBSYSTEM=pci\n DEVICE=+pci:0000:00:02.0\n"
	"4,513,2100,-;platform regulatory.0: Direct firmware load for regulatory.db failed with error -2\n"
	"4,514,2200,-;bluetooth hci0: firmware: failed to load rtl_bt/rtl8761b_fw.bin (-110)\n"
	"4,515,2300,-;platform regulatory.0: Direct firmware load for regulatory.db failed with error -2";

static void fake_machine(struct fakeroot *root)
{
	struct fakesys_pci bridge = { "0000:00:00.0", 0x8086, 0x1237, 0x1af4, 0x1100, 0x060000, 0x02,
				      NULL };
	struct fakesys_pci vga = { "0000:00:02.0", 0x1234, 0x1111, 0x1af4, 0x1100, 0x030000, 0x02,
				   "bochs-drm" };

	fakesys_add_dmi(root, "sys_vendor", "QEMU");
	fakesys_add_dmi(root, "product_name", "Standard PC (i440FX + PIIX, 1996)");
	fakesys_add_dmi(root, "bios_version", "0.0.0  ");
	fakesys_add_dmi(root, "bios_date", "02/06/2015");
	fakesys_add_pci(root, &vga);
	fakesys_add_pci(root, &bridge);
	fakeroot_write(root, "/proc/cpuinfo", cpuinfo);
	fakeroot_write(root, "/proc/meminfo", meminfo);
	fakeroot_write(root, "/proc/modules", proc_modules);
	fakeroot_write(root, "/dev/kmsg", kmsg);
}

static void write_config_gz(struct fakeroot *root, const char *text)
{
	char path[PATH_MAX];
	gzFile gz;

	snprintf(path, sizeof(path), "%.*s/proc/config.gz", PATH_MAX - 32, root->dir);
	gz = gzopen(path, "wb");
	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
	assert_int_equal(gzclose(gz), Z_OK);
}

static void start_boot(struct fakeroot *root, struct bci_executor *ex)
{
	memset(ex, 0, sizeof(*ex));
	fakeroot_executor(root, ex, "console=ttyS0 bootci.run_id=t");
	ex->boot_number = 1;
	snprintf(ex->boot_dir, sizeof(ex->boot_dir), "%.*s/boot-0001", PATH_MAX - 16, ex->run_dir);
	assert_int_equal(bci_mkdir_p(ex->boot_dir, 0755), 0);
}

static void boot_records_the_fake_machine(void **state)
{
	static const char expected[] =
		"format 1\n"
		"dmi.sys_vendor QEMU\n"
		"dmi.product_name Standard PC (i440FX + PIIX, 1996)\n"
		"dmi.bios_version 0.0.0\n"
		"dmi.bios_date 02/06/2015\n"
		"cpu.model QEMU Virtual CPU version 2.5+\n"
		"cpu.count 2\n"
		"memory.kib 1010052\n"
		"kernel.release test\n"
		"kernel.cmdline console=ttyS0 bootci.run_id=t\n"
		"kernel.config kernel.config\n"
		"pci 0000:00:00.0 8086:1237 1af4:1100 060000 02 -\n"
		"pci 0000:00:02.0 1234:1111 1af4:1100 030000 02 bochs-drm\n"
		"module bochs\n"
		"module drm_vram_helper\n"
		"module ext4\n"
		"firmware ok i915/kbl_dmc_ver1_04.bin\n"
		"firmware -2 regulatory.db\n"
		"firmware -110 rtl_bt/rtl8761b_fw.bin\n";
	struct fakeroot root;
	struct bci_executor ex;
	struct bci_machine_env *env;
	char err[512];

	(void)state;
	start_boot(&root, &ex);
	fake_machine(&root);
	write_config_gz(&root, "CONFIG_DRM=m\nCONFIG_DRM_I915=m\n");
	assert_int_equal(bci_environment_record(&ex), 0);
	assert_string_equal(fakeroot_read(&root, "/results/runs/t/boot-0001/environment.txt"),
			    expected);
	assert_string_equal(fakeroot_read(&root, "/results/runs/t/boot-0001/kernel.config"),
			    "CONFIG_DRM=m\nCONFIG_DRM_I915=m\n");
	/* What collect will read: the same through the lib reader. */
	assert_int_equal(bci_machine_env_read(ex.boot_dir, &env, err, sizeof(err)), 0);
	assert_int_equal(env->pci_count, 2);
	assert_string_equal(env->pci[1].driver, "bochs-drm");
	bci_machine_env_free(env);
	fakeroot_executor_release(&root, &ex);
}

static void a_bare_machine_records_what_it_has(void **state)
{
	struct fakeroot root;
	struct bci_executor ex;

	(void)state;
	/* No DMI, no PCI, no config.gz, no kernel log: only what /proc says. */
	start_boot(&root, &ex);
	assert_int_equal(bci_environment_record(&ex), 0);
	assert_string_equal(fakeroot_read(&root, "/results/runs/t/boot-0001/environment.txt"),
			    "format 1\nkernel.release test\n"
			    "kernel.cmdline console=ttyS0 bootci.run_id=t\n");
	assert_null(fakeroot_read(&root, "/results/runs/t/boot-0001/kernel.config"));
	fakeroot_executor_release(&root, &ex);
}

static void a_corrupt_config_gz_is_left_out(void **state)
{
	struct fakeroot root;
	struct bci_executor ex;

	(void)state;
	start_boot(&root, &ex);
	fakeroot_write(&root, "/proc/config.gz", "\x1f\x8b\x08\x00 not deflate at all, cut short");
	assert_int_equal(bci_environment_record(&ex), 0);
	assert_null(strstr(fakeroot_read(&root, "/results/runs/t/boot-0001/environment.txt"),
			   "kernel.config"));
	assert_null(fakeroot_read(&root, "/results/runs/t/boot-0001/kernel.config"));
	fakeroot_executor_release(&root, &ex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer_formats_the_documented_lines),
		cmocka_unit_test(write_then_read_gives_the_same_environment),
		cmocka_unit_test(failed_write_leaves_nothing_half_written),
		cmocka_unit_test(read_refuses_a_missing_config_it_names),
		cmocka_unit_test(reader_refuses_bad_lines_naming_them),
		cmocka_unit_test(reader_takes_comments_and_absent_keys),
		cmocka_unit_test(firmware_requests_from_the_kernel_log),
		cmocka_unit_test(boot_records_the_fake_machine),
		cmocka_unit_test(a_bare_machine_records_what_it_has),
		cmocka_unit_test(a_corrupt_config_gz_is_left_out),
	};

	return cmocka_run_group_tests_name("environment", tests, NULL, NULL);
}

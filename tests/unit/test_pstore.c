// SPDX-License-Identifier: MIT
/*
 * Crash records of the previous boot: pstore entries (efi-pstore and ramoops
 * names) and efi-pstore's EFI variables are saved to boot-NNNN/ and erased,
 * the boot is recorded, and a panic in them is attributed by the IGT engine
 * to the test that was running.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "fakeroot.h"
#include "fsutil.h"
#include "resultgen/resultgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EFI_DUMP "/sys/firmware/efi/efivars/dump-type0-10-1-1764733000-C-cfc8fc79-be2e-4ddc-97f0-9f98bfe298a0"
#define PANIC_RECORD "Panic#1 Part1\n<0>[   12.345678] Kernel panic - not syncing: sysrq triggered crash\n"

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
};

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fakeroot_executor_release(&f->root, &f->ex);
	free(f);
	return 0;
}

static void start(struct fixture *f, const char *cmdline)
{
	fakeroot_executor(&f->root, &f->ex, cmdline);
}

static bool exists(struct fixture *f, const char *path)
{
	char full[PATH_MAX * 2];

	snprintf(full, sizeof(full), "%s%s", f->root.dir, path);
	return access(full, F_OK) == 0;
}

static void records_saved_then_erased(void **state)
{
	struct fixture *f = *state;
	const char *boot;

	start(f, "quiet");
	/* ramoops names its records <kind>-ramoops-<n>; efi-pstore dmesg-efi-<id>. */
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-176473300001", PANIC_RECORD);
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-ramoops-0", "Oops#1 Part1\nBUG: unable to handle page fault\n");
	fakeroot_write(&f->root, "/sys/fs/pstore/console-ramoops-0", "[    0.000000] Linux version 6.1\n");
	fakeroot_write(&f->root, "/sys/fs/pstore/pmsg-ramoops-0", "user message\n");
	fakeroot_write(&f->root, EFI_DUMP, "\x07\x00\x00\x00panic bytes");
	fakeroot_write(&f->root, "/sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-00e098032b8c",
		       "\x07\x00\x00\x00\x01\x00");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_int_equal(f->ex.boot_number, 1);
	assert_true(f->ex.kernel_crashed);
	assert_string_equal(f->ex.crash_dump, "boot-0001/pstore");
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/boot-0001/pstore/dmesg-efi-176473300001"),
			    PANIC_RECORD);
	assert_non_null(fakeroot_read(&f->root, "/results/runs/t/boot-0001/pstore/console-ramoops-0"));
	assert_non_null(fakeroot_read(&f->root, "/results/runs/t/boot-0001/pstore/pmsg-ramoops-0"));
	assert_non_null(fakeroot_read(&f->root,
				      "/results/runs/t/boot-0001/efi/dump-type0-10-1-1764733000-C-cfc8fc79-be2e-4ddc-97f0-9f98bfe298a0"));
	/* Erased once saved; other EFI variables untouched. */
	assert_false(exists(f, "/sys/fs/pstore/dmesg-efi-176473300001"));
	assert_false(exists(f, "/sys/fs/pstore/console-ramoops-0"));
	assert_false(exists(f, EFI_DUMP));
	assert_true(exists(f, "/sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-00e098032b8c"));
	boot = fakeroot_read(&f->root, "/results/runs/t/boot-0001/boot.txt");
	assert_non_null(strstr(boot, "boot 1\n"));
	/* The run's first boot: the crash was an earlier boot's, not this run's. */
	assert_non_null(strstr(boot, "previous none (first boot of the run; a kernel crash of an "
				     "earlier boot, not of this run: pstore: "));
	assert_non_null(strstr(boot, "pstore_records 4\nefi_dump_variables 1\n"));
}

/* efi_pstore not loaded: the dump-type0 variables are all there is. They count as a crash; an
 * uncompressed one is also saved as text for the attribution. */
static void efi_variables_alone_are_a_crash(void **state)
{
	struct fixture *f = *state;
	static const char var[] = "/sys/firmware/efi/efivars/"
				  "dump-type0-1-1-1764733000-D-cfc8fc79-be2e-4ddc-97f0-9f98bfe298a0";
	static const char data[] = "\x07\x00\x00\x00Panic#1 Part1\n<0>[   12.5] Kernel panic - not syncing: sysrq triggered crash\n";
	char path[PATH_MAX + 160];
	FILE *file;

	start(f, "quiet");
	/* the attribute bytes hold NULs: write the bytes as they are */
	snprintf(path, sizeof(path), "%s%s", f->root.dir, var);
	fakeroot_write(&f->root, var, "");
	file = fopen(path, "wb");
	assert_non_null(file);
	assert_int_equal(fwrite(data, 1, sizeof(data) - 1, file), sizeof(data) - 1);
	fclose(file);
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_true(f->ex.kernel_crashed);
	assert_string_equal(f->ex.crash_dump, "boot-0001/efi");
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/boot-0001/efi/dmesg-dump-type0-1-1-"
				       "1764733000-D-cfc8fc79-be2e-4ddc-97f0-9f98bfe298a0"),
			    "Panic#1 Part1\n<0>[   12.5] Kernel panic - not syncing: sysrq triggered crash\n");
	assert_false(exists(f, var));
	/* a compressed one: a crash too, kept as it is */
	fakeroot_write(&f->root, EFI_DUMP, "\x07\x00\x00\x00compressed bytes");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_true(f->ex.kernel_crashed);
	assert_string_equal(f->ex.crash_dump, "boot-0002/efi");
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/boot-0002/boot.txt"),
			       "previous kernel crash (pstore: dump-type0-"));
}

static void console_only_is_no_crash(void **state)
{
	struct fixture *f = *state;

	start(f, "quiet");
	fakeroot_write(&f->root, "/sys/fs/pstore/console-ramoops-0", "Kernel panic in a console log is not a dump\n");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_false(f->ex.kernel_crashed);
}

static void previous_end_is_recorded(void **state)
{
	struct fixture *f = *state;

	start(f, "quiet");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	bci_boot_end(&f->ex, "finished");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_int_equal(f->ex.boot_number, 2);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/boot-0002/boot.txt"),
			       "previous clean: finished\n"));
	/* Boot 2 never ends cleanly; boot 3 finds a panic record. */
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-1", PANIC_RECORD);
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/boot-0003/boot.txt"),
			       "previous kernel crash (pstore: dmesg-efi-1)\n"));
	/* Boot 3 neither: no record either. */
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/boot-0004/boot.txt"),
			       "previous unknown: no clean end, no crash record"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(records_saved_then_erased, setup, teardown),
		cmocka_unit_test_setup_teardown(console_only_is_no_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(efi_variables_alone_are_a_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(previous_end_is_recorded, setup, teardown),
	};

	return cmocka_run_group_tests_name("pstore", tests, NULL, NULL);
}

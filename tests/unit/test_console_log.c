// SPDX-License-Identifier: MIT
/* aggregator/master/serve/console_log.c: a console's bytes in, one file per boot out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/serve/console_log.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What OVMF sends at every power on and reset (build/lab/<...>/console.log), and the rest. */
#define FIRMWARE "\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H\r\n"
#define IPXE "\r\n\x1b[1m\x1b[37m\x1b[40miPXE 1.0.0+git -- Open Source Network Boot Firmware --\r\n" \
	"tftp://10.0.2.2/boot.ipxe... ok\r\nEFI stub: Loaded initrd from command line option\r\n"
#define KERNEL "[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP\r\n" \
	"[    0.000000] Command line: vmlinuz console=ttyS0\r\n"
#define RUN "[    3.211558] [bootci] [1/2] igt@igt_kernel@panic-at-start\r\n" \
	"[    3.773218] Rebooting in 1 seconds..\r\n"
#define HANG "[    3.2] [bootci] [2/2] igt@igt_kernel@hang\r\n" \
	"[    3.9] Kernel panic - not syncing: sysrq triggered crash\r\n"
#define DISK_BOOT "\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HBdsDxe: loading Boot0001 \"bootci-known-good\"\r\n"

struct fixture {
	char dir[64];
	struct bci_console_log *log;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-console-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	bci_console_log_close(f->log);
	bci_remove_tree(f->dir);
	free(f);
	return 0;
}

static void open_log(struct fixture *f, uint64_t boot_max)
{
	char err[300] = "";

	if (bci_console_log_open(f->dir, "m1", boot_max, NULL, NULL, &f->log, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
}

/* Feeds @text @chunk bytes at a time (0: all at once). */
static void feed(struct fixture *f, const char *text, size_t chunk)
{
	size_t len = strlen(text);

	if (!chunk)
		chunk = len;
	for (size_t at = 0; at < len; at += chunk)
		assert_int_equal(bci_console_log_feed(f->log, text + at,
						      len - at < chunk ? len - at : chunk, 1.0), 0);
}

static char *boot_text(struct fixture *f, unsigned number)
{
	char path[PATH_MAX], *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/%06u.log", f->dir, number);
	if (bci_read_file(path, &text, &len, 1 << 20) < 0)
		return NULL;
	return text;
}

static void expect_boot(struct fixture *f, unsigned number, const char *expected)
{
	char *text = boot_text(f, number);

	if (!text)
		fail_msg("boot %u: no file", number);
	if (strcmp(text, expected)) {
		print_error("boot %u:\n%s\n-- expected --\n%s\n", number, text, expected);
		free(text);
		fail();
	}
	free(text);
}

static void expect_boots(struct fixture *f, size_t count)
{
	struct bci_console_boot *boots;
	size_t n;

	assert_int_equal(bci_console_log_list(f->dir, &boots, &n), 0);
	assert_int_equal(n, count);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(boots[i].number, i + 1);
	free(boots);
}

/* The lab's stream: firmware, iPXE, kernel, a panic's reboot; then the disk's known-good boot. */
static void cut_at_firmware(struct fixture *f, size_t chunk)
{
	open_log(f, 0);
	feed(f, FIRMWARE IPXE KERNEL RUN FIRMWARE IPXE KERNEL RUN DISK_BOOT KERNEL, chunk);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 3);
	expect_boot(f, 1, FIRMWARE IPXE KERNEL RUN);
	expect_boot(f, 2, FIRMWARE IPXE KERNEL RUN);
	expect_boot(f, 3, DISK_BOOT KERNEL);
}

static void test_cut_at_firmware(void **state)
{
	cut_at_firmware(*state, 0);
}

/* Cut anywhere, a marker split between reads: the same files. */
static void test_cut_byte_by_byte(void **state)
{
	cut_at_firmware(*state, 1);
}

static void test_cut_odd_chunks(void **state)
{
	cut_at_firmware(*state, 7);
}

/* No firmware output (a kernel booted directly, kexec): each kernel's first line starts a boot. */
static void test_cut_at_kernel(void **state)
{
	struct fixture *f = *state;

	open_log(f, 0);
	feed(f, "tail of a boot serve joined late\r\n" KERNEL RUN KERNEL "Linux version 6.2 (no time stamp)\n"
		"not Linux version at a line start\n", 5);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 4);
	expect_boot(f, 1, "tail of a boot serve joined late\r\n");
	expect_boot(f, 2, KERNEL RUN);
	expect_boot(f, 3, KERNEL);
	expect_boot(f, 4, "Linux version 6.2 (no time stamp)\nnot Linux version at a line start\n");
}

/*
 * The run note ties the kernel that follows it to its boot, even when the boot's start was not
 * seen: serve connected after the firmware's reset (a reader that joined late), or a firmware
 * that sends no reset (the note after a kernel then starts the boot).
 */
static void test_run_note_keeps_its_kernel(void **state)
{
	struct fixture *f = *state;
	char run[BCI_CONSOLE_RUN_MAX + 1];
	int fd;

	open_log(f, 0);
	assert_int_equal(bci_console_log_note(f->log, "reading tcp:127.0.0.1:7001"), 0);
	feed(f, IPXE, 0);
	assert_int_equal(bci_console_log_note(f->log, BCI_CONSOLE_RUN_NOTE "b1-fast (served)"), 0);
	feed(f, KERNEL RUN IPXE, 3);
	assert_int_equal(bci_console_log_note(f->log, BCI_CONSOLE_RUN_NOTE "b1-fast (served)"), 0);
	feed(f, KERNEL HANG, 3);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 2);
	expect_boot(f, 1, "== bootci-serve: reading tcp:127.0.0.1:7001 ==\n" IPXE
			  "== bootci-serve: netboot of run b1-fast (served) ==\n" KERNEL RUN IPXE);
	expect_boot(f, 2, "== bootci-serve: netboot of run b1-fast (served) ==\n" KERNEL HANG);
	for (unsigned boot = 1; boot <= 2; boot++) {
		struct bci_console_in_flight job;

		fd = bci_console_log_open_boot(f->dir, boot);
		assert_int_equal(bci_console_log_run(fd, run), 1);
		assert_string_equal(run, "b1-fast");
		assert_int_equal(bci_console_log_in_flight(fd, &job), 1);
		assert_string_equal(job.name, boot == 1 ? "igt@igt_kernel@panic-at-start" : "igt@igt_kernel@hang");
		close(fd);
	}
}

/*
 * The master's own power cycle of a hung machine: its note ends the hung
 * boot even though no reset was seen, and the firmware and kernel that follow
 * are the new boot's, not a boot of their own each.
 */
static void test_power_note_starts_a_boot(void **state)
{
	struct fixture *f = *state;

	open_log(f, 0);
	feed(f, FIRMWARE KERNEL HANG, 5);
	assert_int_equal(bci_console_log_note(f->log, BCI_CONSOLE_POWER_NOTE "cycle by the master"), 0);
	feed(f, FIRMWARE KERNEL RUN, 7);
	/* Off, then on, with nothing said between: one boot, both notes at its head. */
	assert_int_equal(bci_console_log_note(f->log, BCI_CONSOLE_POWER_NOTE "off by the master"), 0);
	assert_int_equal(bci_console_log_note(f->log, BCI_CONSOLE_POWER_NOTE "on by the master"), 0);
	feed(f, FIRMWARE IPXE, 0);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 3);
	expect_boot(f, 1, FIRMWARE KERNEL HANG);
	expect_boot(f, 2, "== bootci-serve: power cycle by the master ==\n" FIRMWARE KERNEL RUN);
	expect_boot(f, 3, "== bootci-serve: power off by the master ==\n"
			  "== bootci-serve: power on by the master ==\n" FIRMWARE IPXE);
}

/* A reset in the middle of a line (a watchdog, a hang): the boot ends there, the next starts. */
static void test_reset_mid_line(void **state)
{
	struct fixture *f = *state;

	open_log(f, 0);
	feed(f, FIRMWARE KERNEL "[   12.5] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [\x1b[1migt\x1b[0m:9"
		FIRMWARE IPXE, 3);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 2);
	expect_boot(f, 1, FIRMWARE KERNEL "[   12.5] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [\x1b[1migt\x1b[0m:9");
	expect_boot(f, 2, FIRMWARE IPXE);
}

/* A firmware that resets before a kernel starts (a failed netboot) is a boot of its own. */
static void test_firmware_twice(void **state)
{
	struct fixture *f = *state;

	open_log(f, 0);
	feed(f, FIRMWARE "PXE-E18: Server response timeout.\r\n" FIRMWARE IPXE, 0);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 2);
	expect_boot(f, 1, FIRMWARE "PXE-E18: Server response timeout.\r\n");
	expect_boot(f, 2, FIRMWARE IPXE);
}

/*
 * A flood: the boot keeps its head (three quarters of boot_max) and its last
 * bytes, says where and how much was dropped between them; the next boot is whole.
 */
static void test_flood_cut_per_boot(void **state)
{
	struct fixture *f = *state;
	struct bci_console_log_status status;
	char input[4200], expected[6000];
	size_t len = 0, tail;
	int n;

	len += (size_t)snprintf(input, sizeof(input), "%s", FIRMWARE);
	for (int line = 0; len + 100 < sizeof(input) && line < 40; line++)
		len += (size_t)snprintf(input + len, sizeof(input) - len, "L%04d%094d\n", line, line);
	/* 60 + 4000 bytes: 750 kept in the head, 3310 past it in segments of 125: 26 full, 60. */
	assert_int_equal(len, 4060);
	tail = 125 + 60;
	n = snprintf(expected, sizeof(expected),
		     "%.750s\n== bootci-serve: boot 1 passed 750 bytes (--console-boot-max 1000): its "
		     "middle is dropped, its last part kept at its end ==\n"
		     "== bootci-serve: %zu bytes of boot 1 dropped here (past its limit); its last %zu "
		     "bytes follow ==\n%s",
		     input, 3310 - tail, tail, input + len - tail);
	assert_true(n > 0 && (size_t)n < sizeof(expected));
	open_log(f, 1000);
	bci_console_log_status(f->log, &status);
	assert_int_equal(status.flooded_boots, 0);
	assert_false(status.flooding);
	feed(f, input, 333);
	/* Flooding: said while it lasts (console_state.h), the dropped bytes counted so far. */
	bci_console_log_status(f->log, &status);
	assert_true(status.flooding);
	assert_int_equal(status.boot, 1);
	assert_int_equal(status.flooded_boots, 1);
	assert_int_equal(status.last_flooded_boot, 1);
	assert_true(status.last_dropped > 0 && status.last_dropped <= 3310 - tail);
	feed(f, FIRMWARE IPXE, 0);
	bci_console_log_status(f->log, &status);
	assert_false(status.flooding);
	assert_int_equal(status.boot, 2);
	assert_int_equal(status.flooded_boots, 1);
	assert_int_equal(status.last_flooded_boot, 1);
	assert_int_equal(status.last_dropped, 3310 - tail);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 2);
	expect_boot(f, 1, expected);
	expect_boot(f, 2, FIRMWARE IPXE);
}

/* A serve that stopped mid-flood (killed): the next one appends the segments it left. */
static void test_flood_tail_recovered(void **state)
{
	struct fixture *f = *state;
	char flood[2001], path[PATH_MAX], *text;
	FILE *segment;

	memset(flood, 'y', sizeof(flood) - 1);
	flood[sizeof(flood) - 1] = '\0';
	open_log(f, 1000);
	feed(f, FIRMWARE, 0);
	feed(f, flood, 0);
	/* As a kill leaves it: the file handle gone without the boot's end. */
	free(f->log);
	f->log = NULL;
	snprintf(path, sizeof(path), "%s/000001.tail-11", f->dir);
	assert_non_null(segment = fopen(path, "r"));
	fclose(segment);
	open_log(f, 1000);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 1);
	assert_int_equal(access(path, F_OK), -1);
	text = boot_text(f, 1);
	assert_non_null(strstr(text, "== bootci-serve: bytes of boot 1 dropped here (past its limit; how "
				     "many was lost when serve stopped); its last bytes follow ==\n"));
	/* 60 + 2000 bytes: 750 in the head, 1310 past it: 10 full segments and 60 bytes. */
	assert_int_equal(strspn(strstr(text, "follow ==\n") + 10, "y"), 125 + 60);
	free(text);
}

/* Notes take lines of their own; a reopened log goes on with the last boot. */
static void test_notes_and_reopen(void **state)
{
	struct fixture *f = *state;

	open_log(f, 0);
	feed(f, FIRMWARE "half a li", 0);
	assert_int_equal(bci_console_log_note(f->log, "lost tcp:127.0.0.1:7001\n(closed)"), 0);
	feed(f, "ne\r\n", 0);
	assert_int_equal(bci_console_log_boot(f->log), 1);
	bci_console_log_close(f->log);
	f->log = NULL;
	open_log(f, 0);
	assert_int_equal(bci_console_log_note(f->log, "serve started"), 0);
	feed(f, KERNEL, 0);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 1);
	expect_boot(f, 1, FIRMWARE "half a li\n== bootci-serve: lost tcp:127.0.0.1:7001 (closed) ==\n"
			  "ne\r\n== bootci-serve: serve started ==\n" KERNEL);
}

/* A line start held for a marker is written once the console is silent for half a second. */
static void test_tick_writes_held_bytes(void **state)
{
	struct fixture *f = *state;
	char *text;

	open_log(f, 0);
	feed(f, FIRMWARE "login: ", 0);	/* fed at 1.0 */
	assert_int_equal(bci_console_log_tick(f->log, 1.2), 0);
	text = boot_text(f, 1);
	assert_string_equal(text, FIRMWARE);
	free(text);
	assert_int_equal(bci_console_log_tick(f->log, 1.6), 0);
	text = boot_text(f, 1);
	assert_string_equal(text, FIRMWARE "login: ");
	free(text);
}

static void test_reader(void **state)
{
	struct fixture *f = *state;
	char buf[64];
	int fd;

	expect_boots(f, 0);
	open_log(f, 0);
	feed(f, KERNEL KERNEL, 0);
	assert_int_equal(bci_console_log_open_boot(f->dir, 3), -ENOENT);
	assert_int_equal(bci_console_log_open_boot(f->dir, 0), -ENOENT);
	fd = bci_console_log_open_boot(f->dir, 2);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, 15), 15);
	assert_memory_equal(buf, "[    0.000000] ", 15);
	close(fd);
}

/* The job in flight at a boot's end, from the executor's console lines. */
static void test_in_flight(void **state)
{
	struct fixture *f = *state;
	struct bci_console_in_flight job;
	static const char jobs[] =
		"[    3.416269] [bootci] [1/6] igt@igt_basic@pass\r\n"
		"[    3.416300] [bootci] console lines are stamped on this log's clock\r\n"
		"[    3.517409] [bootci] [2/6] igt@igt_basic@fail\r\n"
		"[    3.547109] bootci: [1/6] igt@igt_basic@pass pass 0.1s (elapsed 0s, ETA 0s)\r\n"
		"[    3.579236] bootci: [2/6] igt@igt_basic@fail fail 0.0s (elapsed 0s, ETA 0s)\r\n";
	static const char crash[] =
		"[    3.820673] [bootci] [3/6] igt@igt_kernel@panic-at-start (resumed: panic-at-start)\r\n"
		"[    3.9] Kernel panic - not syncing: sysrq triggered crash\r\n";
	int fd;

	open_log(f, 0);
	feed(f, FIRMWARE KERNEL, 0);
	feed(f, jobs, 0);
	feed(f, FIRMWARE KERNEL, 0);
	feed(f, jobs, 0);
	feed(f, crash, 0);
	feed(f, FIRMWARE, 0);
	bci_console_log_close(f->log);
	f->log = NULL;
	expect_boots(f, 3);

	fd = bci_console_log_open_boot(f->dir, 1);
	assert_int_equal(bci_console_log_in_flight(fd, &job), 0);
	close(fd);
	fd = bci_console_log_open_boot(f->dir, 2);
	assert_int_equal(bci_console_log_in_flight(fd, &job), 1);
	close(fd);
	assert_int_equal(job.index, 3);
	assert_int_equal(job.total, 6);
	assert_string_equal(job.name, "igt@igt_kernel@panic-at-start (resumed: panic-at-start)");
	assert_int_equal(job.start, strlen(FIRMWARE KERNEL) + strlen(jobs));
	fd = bci_console_log_open_boot(f->dir, 3);
	assert_int_equal(bci_console_log_in_flight(fd, &job), 0);
	close(fd);
}

/* The marker's line across the scan's block boundary (64 KiB from the end), long output after it. */
static void test_in_flight_far_back(void **state)
{
	struct fixture *f = *state;
	struct bci_console_in_flight job;
	static const char marker[] = "[   10.000001] [bootci] [7/9] igt@kms_flip@flip-vs-panning-vs-hang\r\n";
	char *after = malloc(65536 - 20 + 1), *before = malloc(300001);
	size_t at;
	int fd;

	/* 65516 bytes after the marker's line: its 68 bytes straddle the boundary. */
	for (at = 0; at + 100 <= 65516; at += 100)
		snprintf(after + at, 101, "%099zu\n", at);
	memset(after + at, 'z', 65516 - at);
	after[65516] = '\0';
	memset(before, 'b', 300000);
	before[300000] = '\0';
	open_log(f, 0);
	feed(f, FIRMWARE "[    9.0] [bootci] [6/9] igt@kms_flip@basic\r\n", 0);
	feed(f, before, 0);
	feed(f, "\r\n[    9.9] bootci: [6/9] igt@kms_flip@basic pass 0.1s\r\n", 0);
	feed(f, marker, 0);
	feed(f, after, 0);
	bci_console_log_close(f->log);
	f->log = NULL;
	fd = bci_console_log_open_boot(f->dir, 1);
	assert_int_equal(bci_console_log_in_flight(fd, &job), 1);
	close(fd);
	assert_int_equal(job.index, 7);
	assert_string_equal(job.name, "igt@kms_flip@flip-vs-panning-vs-hang");
	assert_int_equal(job.start, strlen(FIRMWARE) + 45 + 300000 + 2 + 54);
	free(after);
	free(before);
}

/* A boot's run, from serve's note of its job initrd. */
static void test_run_of_a_boot(void **state)
{
	struct fixture *f = *state;
	char run[BCI_CONSOLE_RUN_MAX + 1];
	int fd;

	open_log(f, 0);
	feed(f, FIRMWARE "http://10.0.2.2:8080/api/v1/boot/52%3A54... ok\r\n", 0);
	assert_int_equal(bci_console_log_note(f->log, BCI_CONSOLE_RUN_NOTE "b1-fast (its job initrd served at "
					      "2026-12-06T09:00:00Z)"), 0);
	feed(f, "...ok\r\n" KERNEL FIRMWARE "BdsDxe: loading Boot0001\r\n" KERNEL, 0);
	bci_console_log_close(f->log);
	f->log = NULL;
	fd = bci_console_log_open_boot(f->dir, 1);
	assert_int_equal(bci_console_log_run(fd, run), 1);
	assert_string_equal(run, "b1-fast");
	close(fd);
	fd = bci_console_log_open_boot(f->dir, 2);
	assert_int_equal(bci_console_log_run(fd, run), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cut_at_firmware, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_byte_by_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_odd_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_at_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_note_keeps_its_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_firmware_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_mid_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_note_starts_a_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_cut_per_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_tail_recovered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notes_and_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tick_writes_held_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_flight_far_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_of_a_boot, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * The run journal never blocks its run (executor/journal.c): a torn last line
 * is cut before anything is appended, a malformed line is skipped and quoted
 * whole, a job whose end was lost is journalled incomplete; and the values
 * joined into paths (lib/executor_keys.c) cannot leave their folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor_keys.h"
#include "fsutil.h"
#include "journal.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/* ---- path keys ---- */

static void run_id_is_a_name(void **state)
{
	static const char *const refused[] = { "../../etc", "../escaped", "..", ".", ".hidden",
					       "a/b", "", "t.superseded-1", "sp ace",
					       "x\\y", "é" };
	static const char *const accepted[] = { "default", "b1-full-1of2", "run_7.rc1", "A_B" };
	struct bci_config *c = NULL;
	char cmdline[300], err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(cmdline, sizeof(cmdline), "quiet bootci.run_id=\"%s\"", refused[i]);
		assert_int_equal(bci_executor_config_load(NULL, NULL, 0, cmdline, &c, err,
							  sizeof(err)), -EINVAL);
		/* The message names the key and the value (an empty one is not one word). */
		assert_non_null(strstr(err, "run_id"));
		if (refused[i][0] && !strchr(refused[i], ' '))
			assert_non_null(strstr(err, refused[i]));
		/* The default stays: the run folder is never built from a refused value. */
		assert_string_equal(bci_config_get(c, "run_id"), "default");
		bci_config_free(c);
	}
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		snprintf(cmdline, sizeof(cmdline), "bootci.run_id=%s", accepted[i]);
		assert_int_equal(bci_executor_config_load(NULL, NULL, 0, cmdline, &c, err,
							  sizeof(err)), 0);
		assert_string_equal(bci_config_get(c, "run_id"), accepted[i]);
		bci_config_free(c);
	}
	/* 128 characters is a name, 129 is not. */
	memset(cmdline, 0, sizeof(cmdline));
	strcpy(cmdline, "bootci.run_id=");
	memset(cmdline + strlen(cmdline), 'r', 128);
	assert_int_equal(bci_executor_config_load(NULL, NULL, 0, cmdline, &c, err, sizeof(err)), 0);
	bci_config_free(c);
	strcat(cmdline, "r");
	assert_int_equal(bci_executor_config_load(NULL, NULL, 0, cmdline, &c, err, sizeof(err)),
			 -EINVAL);
	bci_config_free(c);
}

static void path_keys_stay_in_their_folder(void **state)
{
	static const struct {
		const char *file, *names;
	} refused[] = {
		{ "run_id = ../escaped\n", "e.conf:1: run_id: '../escaped' is not a name" },
		{ "suspend_rtc = ../../tmp/x\n", "e.conf:1: suspend_rtc: '../../tmp/x' is not a name" },
		{ "suspend_rtc = ..\n", "suspend_rtc: '..' is not a name" },
		{ "testlist = etc/testlist\n", "testlist: 'etc/testlist' is not an absolute path" },
		{ "testlist = /etc/../../x\n", "testlist: '/etc/../../x' has a '..' component" },
		{ "test_dir = /usr/./lib\n", "test_dir: '/usr/./lib' has a '.' component" },
		{ "test_dir = ..\n", "test_dir: '..' is not an absolute path" },
	};
	struct bci_config *c = NULL;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(bci_executor_config_load("e.conf", refused[i].file,
							  strlen(refused[i].file), NULL, &c, err,
							  sizeof(err)), -EINVAL);
		if (!strstr(err, refused[i].names))
			fail_msg("'%s' lacks '%s'", err, refused[i].names);
		bci_config_free(c);
	}
	static const char good[] = "testlist = /etc/bootci/t..list\ntest_dir = //usr/libexec/igt\n"
				   "suspend_rtc = rtc1\n";
	assert_int_equal(bci_executor_config_load("e.conf", good, strlen(good), NULL, &c, err,
						  sizeof(err)), 0);
	bci_config_free(c);
}

/* ---- quoting ---- */

static void quote_escapes_and_bounds(void **state)
{
	char buf[16], wide[32];

	(void)state;
	assert_string_equal(bci_quote(wide, sizeof(wide), "a b\\c", 5), "a b\\\\c");
	assert_string_equal(bci_quote(wide, sizeof(wide), "\0\x01\n\xe9", 4), "\\x00\\x01\\x0a\\xe9");
	/* An escape is never cut in half. */
	assert_string_equal(bci_quote(buf, sizeof(buf), "\0\x01\n\xe9", 4), "\\x00\\x01\\x0a...");
	/* 15 characters fit in 16 bytes; 16 do not: as much as fits, then "...". */
	assert_string_equal(bci_quote(buf, sizeof(buf), "abcdefghijklmno", 15), "abcdefghijklmno");
	assert_string_equal(bci_quote(buf, sizeof(buf), "abcdefghijklmnop", 16), "abcdefghijkl...");
	assert_string_equal(bci_quote(buf, sizeof(buf), "abcdefghijk\x01xyz", 15), "abcdefghijk...");
	assert_string_equal(bci_quote(buf, 1, "abc", 3), "");
}

/* ---- replay ---- */

static void replay_keeps_valid_lines_around_garbage(void **state)
{
	static const char text[] = "boot 1 1700000000 6.1\nstart 0\nexit 0 0 0.100\n"
				   "stort 1 0 0.105 written by nobody\nstart 1\n"
				   "garbage\0with a NUL\nexit 9 0 0.1\ndynamic 1 sub@dyn\n"
				   "exit 1 0 0.2 out=x\nstar";
	struct bci_journal j;

	(void)state;
	assert_int_equal(bci_journal_init(&j, 2), 0);
	assert_int_equal(bci_journal_replay(&j, "bootci-journal.txt", text, sizeof(text) - 1), 0);
	assert_int_equal(j.boots, 1);
	assert_true(j.jobs[0].finished);
	assert_int_equal(j.jobs[1].starts, 1);
	assert_int_equal(j.in_flight, 1);
	assert_false(j.jobs[1].finished);
	assert_int_equal(j.jobs[1].dynamic_count, 1);
	/* Four lines skipped: an unknown word, a NUL byte, a job the run does not have, an end
	 * whose file sizes do not read (the job stays in flight). */
	assert_int_equal(j.skipped, 4);
	assert_string_equal(j.damage[0], "bootci-journal.txt:4: malformed line "
					 "'stort 1 0 0.105 written by nobody' (33 bytes) skipped");
	assert_string_equal(j.damage[1], "bootci-journal.txt:6: malformed line "
					 "'garbage\\x00with a NUL' (18 bytes) skipped");
	assert_string_equal(j.damage[2], "bootci-journal.txt:7: malformed line "
					 "'exit 9 0 0.1' (12 bytes) skipped");
	assert_string_equal(j.damage[3], "bootci-journal.txt:9: malformed line "
					 "'exit 1 0 0.2 out=x' (18 bytes) skipped");
	/* The torn last line is located, not replayed. */
	assert_int_equal(j.torn_len, 4);
	assert_memory_equal(text + j.torn_offset, "star", 4);
	bci_journal_close(&j);
}

/*
 * The boots are counted by their lines' numbers: a damaged start that lost the
 * lines of the first boots does not number the next boot 1 again; a number
 * lower than the count is counted on.
 */
static void replay_counts_boots_by_their_numbers(void **state)
{
	static const char damaged[] = "\x01\xfe garbage where boots 1 and 2 were\n"
				      "boot 3 1700000000 6.1\nstart 0\n";
	static const char restarted[] = "boot 1 0 a\nboot 2 0 a\nboot 1 0 a\nboot x 0 a\n";
	struct bci_journal j;

	(void)state;
	assert_int_equal(bci_journal_init(&j, 1), 0);
	assert_int_equal(bci_journal_replay(&j, "bootci-journal.txt", damaged, sizeof(damaged) - 1), 0);
	assert_int_equal(j.boots, 3);
	assert_int_equal(j.skipped, 1);
	bci_journal_close(&j);
	assert_int_equal(bci_journal_init(&j, 1), 0);
	assert_int_equal(bci_journal_replay(&j, "bootci-journal.txt", restarted,
					    sizeof(restarted) - 1), 0);
	assert_int_equal(j.boots, 4);
	bci_journal_close(&j);
}

static void replay_of_a_long_line_is_bounded(void **state)
{
	size_t len = 5000;
	char *text = malloc(len + 1);
	struct bci_journal j;

	(void)state;
	memset(text, 'x', len);
	text[len - 1] = '\n';
	assert_int_equal(bci_journal_init(&j, 1), 0);
	assert_int_equal(bci_journal_replay(&j, "j", text, len), 0);
	assert_int_equal(j.skipped, 1);
	assert_non_null(strstr(j.damage[0], "xxx...' (4999 bytes) skipped"));
	bci_journal_close(&j);
	free(text);
}

/* ---- the file ---- */

static char dir[] = "/tmp/bci-journal-XXXXXX";

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/bci-journal-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return bci_remove_tree(dir);
}

static void write_text(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(bci_write_all(fd, text, len), 0);
	close(fd);
}

static char *read_text(const char *path)
{
	char *text = NULL;

	if (bci_read_file(path, &text, NULL, 1 << 20) < 0)
		return NULL;
	return text;
}

static void cut_torn_line_truncates_to_the_last_newline(void **state)
{
	char path[64], block[5000], *text;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/f", dir);
	write_text(path, "a\nbc", 4);
	fd = open(path, O_RDWR);
	assert_int_equal(bci_cut_torn_line(fd), 2);
	assert_int_equal(bci_cut_torn_line(fd), 0);
	close(fd);
	text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "a\n");
	free(text);
	/* No newline at all, over more than one block read: the whole file is torn. */
	memset(block, 'z', sizeof(block));
	write_text(path, block, sizeof(block));
	fd = open(path, O_RDWR);
	assert_int_equal(bci_cut_torn_line(fd), 5000);
	close(fd);
	/* A newline more than a block before the end. */
	block[10] = '\n';
	write_text(path, block, sizeof(block));
	fd = open(path, O_RDWR);
	assert_int_equal(bci_cut_torn_line(fd), 5000 - 11);
	close(fd);
}

static void open_cuts_a_torn_tail_and_replays_cleanly_after(void **state)
{
	char path[64], note[96], *text;
	struct bci_journal j;

	(void)state;
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", dir);
	snprintf(note, sizeof(note), "%s/" BCI_RESULTS_JOURNAL_REPAIRS, dir);
	write_text(path, "boot 1 1700000000 6.1\nstart 0\nexit 0 0 0.1\nstar", 47);
	assert_int_equal(bci_journal_open(&j, path, 2), 0);
	assert_int_equal(j.skipped, 0);
	assert_int_equal(bci_journal_append(&j, BCI_RUN_JOURNAL_START, 1, NULL), 0);
	bci_journal_close(&j);
	text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "boot 1 1700000000 6.1\nstart 0\nexit 0 0 0.1\nstart 1\n");
	free(text);
	text = read_text(note);
	assert_non_null(text);
	assert_non_null(strstr(text, "boot 2: bootci-journal.txt: cut a torn last line 'star' (4 bytes"));
	free(text);
	/* The boot after: nothing to repair. */
	unlink(note);
	assert_int_equal(bci_journal_open(&j, path, 2), 0);
	assert_int_equal(j.skipped, 0);
	assert_int_equal(j.in_flight, 1);
	bci_journal_close(&j);
	assert_int_equal(access(note, F_OK), -1);
}

static void open_goes_on_past_garbage_and_marks_lost_ends(void **state)
{
	static const char text[] = "boot 1 1700000000 6.1\nstart 0\n\x01\x02 garbage here\n"
				   "start 1\n";
	char path[64], note[96], *out;
	struct bci_journal j;

	(void)state;
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", dir);
	snprintf(note, sizeof(note), "%s/" BCI_RESULTS_JOURNAL_REPAIRS, dir);
	write_text(path, text, sizeof(text) - 1);
	assert_int_equal(bci_journal_open(&j, path, 3), 0);
	assert_int_equal(j.skipped, 1);
	/* Job 1 is the job in flight (the IGT engine marks it); job 0's end is lost. */
	assert_int_equal(j.in_flight, 1);
	assert_false(j.jobs[0].finished);
	bci_journal_close(&j);
	out = read_text(path);
	assert_non_null(out);
	assert_non_null(strstr(out, "start 1\nincomplete 0 1\n"));
	free(out);
	out = read_text(note);
	assert_non_null(out);
	assert_non_null(strstr(out, "boot 2: bootci-journal.txt:3: malformed line "
				    "'\\x01\\x02 garbage here' (15 bytes) skipped\n"));
	assert_non_null(strstr(out, "boot 2: job 0: its end is lost from the journal: incomplete\n"));
	free(out);
}

/* A crash after a job was marked incomplete and before it started again is no repair. */
static void an_incomplete_job_is_not_an_end_lost(void **state)
{
	static const char text[] = "boot 1 1700000000 6.1\nstart 0\nboot 2 1700000100 6.1\n"
				   "incomplete 0 1\n";
	char path[64], note[96], *out;
	struct bci_journal j;

	(void)state;
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", dir);
	snprintf(note, sizeof(note), "%s/" BCI_RESULTS_JOURNAL_REPAIRS, dir);
	write_text(path, text, sizeof(text) - 1);
	assert_int_equal(bci_journal_open(&j, path, 2), 0);
	assert_int_equal(j.in_flight, -1);
	assert_true(j.jobs[0].incomplete);
	bci_journal_close(&j);
	out = read_text(path);
	assert_non_null(out);
	assert_string_equal(out, text);
	free(out);
	assert_int_equal(access(note, F_OK), -1);
}

/* The barriers a journal asked for, in order: "fs" (syncfs) or "fd" (fdatasync). */
static char barriers[256];

static int recording_barrier(int fd, bool whole_fs)
{
	size_t used = strlen(barriers);

	snprintf(barriers + used, sizeof(barriers) - used, "%s ", whole_fs ? "fs" : "fd");
	return (whole_fs ? syncfs(fd) : fdatasync(fd)) < 0 ? -errno : 0;
}

/*
 * Owed (a job's journal.txt exit written, not durable): a synced line after it
 * (`done`, an abort) pays with a whole barrier before it is written, so that it
 * never reaches the disk before the job's end; a whole sync pays once; the last
 * exit line is remembered, with its rest, for a repair of journal.txt.
 */
static void an_owed_barrier_is_paid_before_the_next_synced_line(void **state)
{
	char path[64];
	struct bci_journal j;

	(void)state;
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", dir);
	write_text(path, "boot 1 1700000000 6.1\nstart 0\n", 30);
	assert_int_equal(bci_journal_open(&j, path, 2), 0);
	assert_int_equal(j.last_end, -1);
	j.barrier = recording_barrier;
	barriers[0] = '\0';
	bci_journal_owe(&j);
	assert_int_equal(bci_journal_writef(&j, BCI_RUN_JOURNAL_EXIT, 0, "%d %.3f", 0, 0.5), 0);
	assert_int_equal(j.last_end, 0);
	assert_string_equal(j.last_end_rest, "0 0.500");
	assert_string_equal(barriers, "");
	assert_int_equal(bci_journal_append(&j, BCI_RUN_JOURNAL_DONE, 0, NULL), 0);
	assert_string_equal(barriers, "fs fd ");
	assert_false(j.owes_fs);
	/* Nothing owed: a synced line is one fdatasync; an owed fdatasync-only sync is whole. */
	barriers[0] = '\0';
	bci_journal_owe(&j);
	assert_int_equal(bci_journal_sync(&j, false), 0);
	assert_int_equal(bci_journal_sync(&j, false), 0);
	assert_string_equal(barriers, "fs ");
	bci_journal_owe(&j);
	barriers[0] = '\0';
	bci_journal_close(&j);
	assert_string_equal(barriers, "fs ");
}

/*
 * A line written without its fdatasync (a job's end) is in the file and the
 * state at once, waits for the next barrier, and the next journal read sees it.
 */
static void a_line_written_unsynced_waits_for_the_barrier(void **state)
{
	char path[64], *out;
	struct bci_journal j;

	(void)state;
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", dir);
	write_text(path, "boot 1 1700000000 6.1\nstart 0\n", 30);
	assert_int_equal(bci_journal_open(&j, path, 2), 0);
	assert_false(j.unsynced);
	assert_int_equal(bci_journal_writef(&j, BCI_RUN_JOURNAL_EXIT, 0, "%d %.3f", 0, 0.5), 0);
	assert_true(j.unsynced);
	assert_true(j.jobs[0].finished);
	assert_int_equal(bci_journal_writef(&j, BCI_RUN_JOURNAL_START, 1, "%s", ""), 0);
	assert_int_equal(j.in_flight, 1);
	assert_int_equal(bci_journal_sync(&j, true), 0);
	assert_false(j.unsynced);
	/* A synced append clears it too: its fdatasync covers the lines before. */
	assert_int_equal(bci_journal_writef(&j, BCI_RUN_JOURNAL_EXIT, 1, "%d %.3f", 0, 0.2), 0);
	assert_int_equal(bci_journal_append(&j, BCI_RUN_JOURNAL_DONE, 0, NULL), 0);
	assert_false(j.unsynced);
	bci_journal_close(&j);
	out = read_text(path);
	assert_non_null(out);
	assert_string_equal(out, "boot 1 1700000000 6.1\nstart 0\nexit 0 0 0.500\nstart 1\n"
				 "exit 1 0 0.200\ndone\n");
	free(out);
}

static int full_calls;

/* The executor's reserve, for the test: a file whose blocks are given back. */
static void give_back(void *ctx)
{
	full_calls++;
	assert_int_equal(unlink(ctx), 0);
}

/*
 * A full partition meets the run journal first (issue 10 defect 3): room is
 * made once (the reserve), the written part of the line cut, the line whole.
 * A real filesystem of 64 KiB (tmpfs), so root only.
 */
static void a_full_partition_gives_back_room_for_the_line(void **state)
{
	char top[] = "/tmp/test_journal_full.XXXXXX", path[96], reserve[96], filler[96];
	char block[4096] = { 0 }, *text;
	struct bci_journal j;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(top));
	if (mount("tmpfs", top, "tmpfs", 0, "size=64k") < 0) {
		rmdir(top);
		skip();
	}
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", top);
	snprintf(reserve, sizeof(reserve), "%s/bootci-reserve", top);
	snprintf(filler, sizeof(filler), "%s/filler", top);
	assert_int_equal(bci_journal_open(&j, path, 2), 0);
	fd = open(reserve, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(bci_write_all(fd, block, sizeof(block)), 0);
	close(fd);
	fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	while (bci_write_all(fd, block, sizeof(block)) == 0)
		;
	close(fd);
	/* Without a way to make room, the line fails. */
	assert_int_equal(bci_journal_append(&j, BCI_RUN_JOURNAL_START, 0, NULL), -ENOSPC);
	j.full = give_back;
	j.full_ctx = reserve;
	assert_int_equal(bci_journal_append(&j, BCI_RUN_JOURNAL_START, 0, NULL), 0);
	assert_int_equal(full_calls, 1);
	assert_int_equal(access(reserve, F_OK), -1);
	bci_journal_close(&j);
	text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "start 0\n");
	free(text);
	umount2(top, MNT_DETACH);
	rmdir(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_id_is_a_name),
		cmocka_unit_test(path_keys_stay_in_their_folder),
		cmocka_unit_test(quote_escapes_and_bounds),
		cmocka_unit_test(replay_keeps_valid_lines_around_garbage),
		cmocka_unit_test(replay_of_a_long_line_is_bounded),
		cmocka_unit_test(replay_counts_boots_by_their_numbers),
		cmocka_unit_test_setup_teardown(cut_torn_line_truncates_to_the_last_newline, setup,
						teardown),
		cmocka_unit_test_setup_teardown(open_cuts_a_torn_tail_and_replays_cleanly_after,
						setup, teardown),
		cmocka_unit_test_setup_teardown(open_goes_on_past_garbage_and_marks_lost_ends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(an_owed_barrier_is_paid_before_the_next_synced_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_line_written_unsynced_waits_for_the_barrier, setup,
						teardown),
		cmocka_unit_test_setup_teardown(an_incomplete_job_is_not_an_end_lost, setup,
						teardown),
		cmocka_unit_test(a_full_partition_gives_back_room_for_the_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

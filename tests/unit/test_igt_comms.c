// SPDX-License-Identifier: MIT
/*
 * The executor speaking igt_runner's socket protocol (executor/igt/comms.c)
 * to the fixture tests/fixtures/igt_socket.c on fake root trees: the comms
 * file written as packets arrive, journal.txt and the console driven by the
 * packets, the runner's own end of the job in comms, and the results
 * generator judging the run from it as igt_results does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "igt/igt.h"
#include "fakeroot.h"
#include "fsutil.h"
#include "resultgen/resultgen.h"
#include "runner_comms.h"

#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
	char json[1 << 18];
	char console[1 << 16];
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

/* A fake tree whose IGT folder holds the fixtures, with @testlist and @cmdline. */
static void prepare(struct fixture *f, const char *testlist, const char *cmdline)
{
	char link[PATH_MAX + 64], fixtures[PATH_MAX], full[2048];

	snprintf(full, sizeof(full),
		 "bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.run_id=t %s",
		 cmdline);
	fakeroot_executor(&f->root, &f->ex, full);
	fakeroot_write(&f->root, "/etc/bootci/testlist", testlist);
	snprintf(fixtures, sizeof(fixtures), "%s", fixture_path("igt_socket"));
	snprintf(link, sizeof(link), "%s/usr/libexec", f->root.dir);
	assert_int_equal(bci_mkdir_p(link, 0755), 0);
	strcat(link, "/igt-gpu-tools");
	assert_int_equal(symlink(dirname(fixtures), link), 0);
	assert_int_equal(bci_signals_setup(&f->ex), 0);
}

/* bci_igt_run(), the console (stderr) kept for the checks and shown as usual after. */
static void execute(struct fixture *f)
{
	char path[PATH_MAX + 16];
	const char *text;
	int saved, fd;

	snprintf(path, sizeof(path), "%s/console.log", f->root.dir);
	fflush(stderr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	saved = dup(STDERR_FILENO);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	text = fakeroot_read(&f->root, "/console.log");
	snprintf(f->console, sizeof(f->console), "%s", text ? text : "");
	fputs(f->console, stderr);
}

static void run(struct fixture *f, const char *testlist, const char *cmdline)
{
	prepare(f, testlist, cmdline);
	execute(f);
}

static void generate(struct fixture *f)
{
	char err[512] = "";
	FILE *out = fmemopen(f->json, sizeof(f->json) - 1, "w");

	assert_non_null(out);
	if (bci_resultgen_write(f->ex.run_dir, out, err, sizeof(err)) < 0)
		fail_msg("results generator: %s", err);
	fputc('\0', out);
	fclose(out);
}

static const char *result_of(struct fixture *f, const char *name)
{
	static char result[64];
	char key[512];
	const char *p, *r;

	snprintf(key, sizeof(key), "\"%s\": {", name);
	p = strstr(f->json, key);
	result[0] = '\0';
	if (!p || !(r = strstr(p, "\"result\": \"")))
		return result;
	r += strlen("\"result\": \"");
	snprintf(result, sizeof(result), "%.*s", (int)strcspn(r, "\""), r);
	return result;
}

static const char *run_file(struct fixture *f, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/results/runs/t/%s", name);
	return fakeroot_read(&f->root, path);
}

/* The types of job @job's comms records, as "2 8 4 1 5 3" (exec, version, ...). */
static const char *comms_types(struct fixture *f, unsigned job)
{
	static char types[512];
	struct bci_comms_packet p;
	char path[PATH_MAX + 64], *text = NULL;
	size_t len = 0, pos = 0, used = 0;

	snprintf(path, sizeof(path), "%s/%u/comms", f->ex.run_dir, job);
	types[0] = '\0';
	if (bci_read_file(path, &text, &len, 1 << 20) < 0)
		return types;
	while (bci_comms_next(text, len, &pos, &p, NULL, 0) == 1 && used < sizeof(types) - 8)
		used += (size_t)snprintf(types + used, sizeof(types) - used, "%s%u", used ? " " : "", p.type);
	if (pos != len)
		snprintf(types + used, sizeof(types) - used, " (damaged)");
	free(text);
	return types;
}

static void socket_jobs_are_judged_from_their_packets(void **state)
{
	struct fixture *f = *state;

	run(f, "igt@igt_socket@quiet-pass\nigt@igt_socket@warns\nigt@igt_socket@fails\n"
	       "igt@igt_socket@dynamic\n", "");
	/* exec (ours), version, start, log, result, exit (ours) */
	assert_string_equal(comms_types(f, 0), "2 8 4 1 5 3");
	assert_string_equal(comms_types(f, 3), "2 8 4 6 7 6 1 7 5 3");
	/* journal.txt from the packets, as from the text protocol's lines */
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "quiet-pass\nexit:0 ("));
	assert_non_null(strstr(run_file(f, "2/journal.txt"), "fails\nexit:98 ("));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "dynamic 3 dynamic@d2\n"));
	/* The protocol went to the socket; stdout has none of it, stderr only the stray text. */
	assert_null(strstr(run_file(f, "0/out.txt"), "Starting subtest"));
	assert_string_equal(run_file(f, "0/err.txt"), "Fontconfig error: Cannot load default config file\n");
	/* The console's verdict follows the packets. */
	assert_non_null(strstr(f->console, "igt@igt_socket@quiet-pass pass"));
	assert_non_null(strstr(f->console, "igt@igt_socket@fails fail"));

	generate(f);
	/* cairo's stray line on fd 2 is no warn under the socket (it was under text). */
	assert_string_equal(result_of(f, "igt@igt_socket@quiet-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_socket@warns"), "warn");
	assert_string_equal(result_of(f, "igt@igt_socket@fails"), "fail");
	assert_string_equal(result_of(f, "igt@igt_socket@dynamic@d1"), "pass");
	assert_string_equal(result_of(f, "igt@igt_socket@dynamic@d2"), "skip");
}

static void multiple_mode_over_the_socket(void **state)
{
	struct fixture *f = *state;

	run(f, "igt@igt_socket@quiet-pass\nigt@igt_socket@warns\nigt@igt_socket@fails\n",
	    "bootci.multiple_mode=yes");
	assert_string_equal(run_file(f, "joblist.txt"), "igt_socket quiet-pass,warns,fails\n");
	assert_string_equal(comms_types(f, 0), "2 8 4 1 5 4 1 5 4 1 5 3");
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "quiet-pass\nwarns\nfails\nexit:98 ("));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_socket@quiet-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_socket@warns"), "warn");
	assert_string_equal(result_of(f, "igt@igt_socket@fails"), "fail");
}

/* The runner's timeout is said in comms, as igt_runner says it: an override, then the exit. */
static void timeout_is_an_override_in_comms(void **state)
{
	struct fixture *f = *state;

	run(f, "igt@igt_socket@hangs\nigt@igt_socket@quiet-pass\n",
	    "bootci.per_test_timeout=1 bootci.kill_grace=2");
	assert_string_equal(comms_types(f, 0), "2 8 4 9 3");
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "hangs\ntimeout:"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_socket@hangs"), "timeout");
	assert_string_equal(result_of(f, "igt@igt_socket@quiet-pass"), "pass");
}

/*
 * A job stopped for a taint says so where its results come from, as igt_runner
 * does: in comms, as a stdout log packet, when the test speaks the socket; not
 * in out.txt.
 */
static void taint_kill_note_is_in_comms(void **state)
{
	struct fixture *f = *state;
	char tainted[PATH_MAX + 32], path[PATH_MAX + 64], *text = NULL;
	const char *note = "runner: This test was killed due to a kernel taint (0x200).\n";
	struct bci_comms_packet p;
	size_t len = 0, pos = 0;
	bool found = false;

	prepare(f, "igt@igt_socket@taint\nigt@igt_socket@quiet-pass\n",
		"bootci.multiple_mode=yes bootci.abort_on=taint bootci.kill_grace=2");
	fakeroot_write(&f->root, "/proc/sys/kernel/tainted", "0\n");
	snprintf(tainted, sizeof(tainted), "%s/proc/sys/kernel/tainted", f->root.dir);
	setenv("BOOTCI_FIXTURE_TAINTED", tainted, 1);
	execute(f);
	unsetenv("BOOTCI_FIXTURE_TAINTED");
	snprintf(path, sizeof(path), "%s/0/comms", f->ex.run_dir);
	assert_int_equal(bci_read_file(path, &text, &len, 1 << 20), 0);
	while (bci_comms_next(text, len, &pos, &p, NULL, 0) == 1)
		if (p.type == BCI_COMMS_LOG && p.stream == 1 && p.text && !strcmp(p.text, note))
			found = true;
	free(text);
	assert_true(found);
	assert_null(strstr(run_file(f, "0/out.txt"), "killed due to a kernel taint"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_socket@taint"), "pass");
}

/* A resumed job appends after the whole records a crash left. */
static void resume_cuts_a_damaged_comms_tail(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 64];
	int fd;

	run(f, "igt@igt_socket@quiet-pass\n", "");
	snprintf(path, sizeof(path), "%s/0/comms", f->ex.run_dir);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1TGI\0\0\0", 7), 7);
	close(fd);
	assert_string_equal(comms_types(f, 0), "2 8 4 1 5 3 (damaged)");
	/* the same job run again in the same folder, as a resume does */
	struct bci_igt_job job;
	struct bci_joblist_entry entry = { .binary = (char *)"igt_socket" };
	char *subs[] = { (char *)"quiet-pass", NULL };
	struct bci_igt_selection what = { .subtests = subs, .count = 1 };
	struct bci_journal journal = { .end_fd = -1 };
	entry.subtests = subs;
	entry.count = 1;
	assert_int_equal(bci_igt_job_run(&job, &f->ex, &journal, NULL, 0, &entry, &what), 0);
	assert_int_equal(bci_journal_pay_end(&journal), 0);
	assert_string_equal(comms_types(f, 0), "2 8 4 1 5 3 2 8 4 1 5 3");
}

/* Hand-made records for a run folder the previous boot left (canary, header, payload). */
static void put_record(FILE *out, uint32_t type, const char *payload, size_t n)
{
	uint32_t head[5] = { 0x49475431u, (uint32_t)(16 + n), type, 7, 7 };

	fwrite(head, 1, sizeof(head), out);
	fwrite(payload, 1, n, out);
}

/*
 * The kernel died in a socket job's subtest: the crash is said in comms (where its
 * results are read from), so the subtest is crash and carries the dump, as for text.
 */
static void kernel_crash_in_a_socket_job(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 64];
	FILE *comms;

	prepare(f, "unused\n", "");
	fakeroot_write(&f->root, "/results/runs/t/joblist.txt", "igt_socket quiet-pass\nigt_socket fails\n");
	fakeroot_write(&f->root, "/results/runs/t/metadata.txt", "name : t\n");
	fakeroot_write(&f->root, "/results/runs/t/bootci-journal.txt",
		       "boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n");
	fakeroot_write(&f->root, "/results/runs/t/0/journal.txt", "quiet-pass\nexit:0 (0.010s)\n");
	fakeroot_write(&f->root, "/results/runs/t/0/out.txt",
		       "Starting subtest: quiet-pass\nSubtest quiet-pass: SUCCESS (0.001s)\n");
	fakeroot_write(&f->root, "/results/runs/t/0/err.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/0/dmesg.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/1/journal.txt", "fails\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/1/err.txt", "Fontconfig error: x\n");
	fakeroot_write(&f->root, "/results/runs/t/1/dmesg.txt", "");
	snprintf(path, sizeof(path), "%s/results/runs/t/1/comms", f->root.dir);
	comms = fopen(path, "w");
	assert_non_null(comms);
	put_record(comms, 2, "/x/igt_socket --run-subtest fails", 34);
	put_record(comms, 4, "fails", 6);
	put_record(comms, 1, "\001going down\n", 13);
	fclose(comms);
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-1",
		       "Panic#1 Part1\n<0>Kernel panic - not syncing: sysrq triggered crash\n");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	execute(f);
	/* found in flight from comms (out.txt has no protocol), said in comms */
	assert_non_null(strstr(f->console, "job 2: fails crashed the kernel"));
	assert_string_equal(comms_types(f, 1), "2 4 1 1 5 1");
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_socket@fails"), "crash");
	assert_non_null(strstr(f->json, "Kernel panic - not syncing: sysrq triggered crash"));
	assert_string_equal(result_of(f, "igt@igt_socket@quiet-pass"), "pass");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(socket_jobs_are_judged_from_their_packets, setup, teardown),
		cmocka_unit_test_setup_teardown(multiple_mode_over_the_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(timeout_is_an_override_in_comms, setup, teardown),
		cmocka_unit_test_setup_teardown(taint_kill_note_is_in_comms, setup, teardown),
		cmocka_unit_test_setup_teardown(resume_cuts_a_damaged_comms_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_crash_in_a_socket_job, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * IGT's strings, in one place, as IGT keeps its runner's in
 * runner/output_strings.h: what a test prints, what it writes into the
 * kernel log, what igt_runner writes into journal.txt, out.txt and comms,
 * and what its socket protocol is named by. IGT 1.27.1 spells each of them
 * this way; bootci reads and writes them through these names only
 * (lib/igt_protocol.c parses the lines, lib/results_dir.c journal.txt,
 * lib/runner_comms.c the packets, lib/resultgen/ judges them, and the
 * executor writes them for its own jobs and notes), so a string is changed
 * here or nowhere. The fixtures in tests/fixtures/ stand in for IGT and keep
 * their own spelling on purpose: they check these.
 *
 * String literals, so that they can start a format ("%s" fields after them).
 */
#ifndef BCI_IGT_OUTPUT_STRINGS_H
#define BCI_IGT_OUTPUT_STRINGS_H

/* ---- a test's output (out.txt; lib/igt_core.c prints them) ---- */

/* A subtest began; followed by its name. `Starting subtest: subtestname` */
#define BCI_IGT_STARTING_SUBTEST "Starting subtest: "
/* A subtest ended; followed by its name, ": ", a result word and maybe its time.
 * `Subtest subtestname: SUCCESS (0.003s)` */
#define BCI_IGT_SUBTEST_RESULT "Subtest "
/* A dynamic subtest began; followed by its name. */
#define BCI_IGT_STARTING_DYNAMIC_SUBTEST "Starting dynamic subtest: "
/* A dynamic subtest ended; as BCI_IGT_SUBTEST_RESULT. */
#define BCI_IGT_DYNAMIC_SUBTEST_RESULT "Dynamic subtest "
/* A test process began. `IGT-Version: 1.27.1-g... (x86_64) (Linux: 6.1.0 x86_64)` */
#define BCI_IGT_VERSIONSTRING "IGT-Version: "

/* The result words after "NAME: " (lib/igt_protocol.h maps them to results). */
#define BCI_IGT_WORD_SUCCESS "SUCCESS"
#define BCI_IGT_WORD_SKIP "SKIP"
#define BCI_IGT_WORD_FAIL "FAIL"
#define BCI_IGT_WORD_CRASH "CRASH"
#define BCI_IGT_WORD_TIMEOUT "TIMEOUT"

/* ---- the kernel log (dmesg.txt), anywhere in a record's text ---- */

/* `[IGT] test-binary-name: starting subtest subtestname` */
#define BCI_IGT_STARTING_SUBTEST_DMESG ": starting subtest "
/* `[IGT] test-binary-name: starting dynamic subtest subtestname` */
#define BCI_IGT_STARTING_DYNAMIC_SUBTEST_DMESG ": starting dynamic subtest "
/* The test's warnings that the regex after it matches do not count. */
#define BCI_IGT_ADD_IGNORED_REGEX_DMESG "add ignored dmesg regex: "

/* ---- journal.txt (the runner's) ---- */

/* The test's exit code: `exit:77 (0.003s)` */
#define BCI_IGT_EXECUTOR_EXIT "exit:"
/* The test was stopped past a timeout, with its exit code: `timeout:-15 (360.000s)` */
#define BCI_IGT_EXECUTOR_TIMEOUT "timeout:"

/* ---- the runner's notes, in out.txt or a log packet of comms ---- */

/* A test stopped for a kernel taint (a printf format: the taints). */
#define BCI_IGT_RUNNER_KILLED_TAINT "\nrunner: This test was killed due to a kernel taint (%#lx).\n"
/* A datagram on the socket that is no packet. */
#define BCI_IGT_RUNNER_BAD_PACKET                                                      \
	"\nrunner: Socket communication error, invalid packet size. Packet is discarded, " \
	"test result and logs might be incorrect.\n"
/* igt_results' notes on a comms dump whose packets come in an order no test sends
 * (printf formats: the names). */
#define BCI_IGT_RUNNER_SUBTEST_ALREADY_RUNNING \
	"\nrunner: Subtest %s already running when subtest %s starts. This is a test bug.\n"
#define BCI_IGT_RUNNER_DYNAMIC_STILL_RUNNING \
	"\nrunner: Dynamic subtest %s still running when subtest %s ended. This is a test bug.\n"
#define BCI_IGT_RUNNER_DYNAMIC_OUTSIDE_SUBTEST \
	"\nrunner: Dynamic subtest %s started when not inside a subtest. This is a test bug.\n"
#define BCI_IGT_RUNNER_DYNAMIC_ALREADY_RUNNING                                            \
	"\nrunner: Dynamic subtest %s already running when dynamic subtest %s starts. This is " \
	"a test bug.\n"
#define BCI_IGT_RUNNER_DYNAMIC_RESULT_OUTSIDE_SUBTEST \
	"\nrunner: Dynamic subtest %s result when not inside a subtest. This is a test bug.\n"

/* ---- the socket (lib/runner_comms.h has the format) ---- */

/* The environment variable that gives a test its end of the socket: `IGT_RUNNER_SOCKET_FD=N` */
#define BCI_IGT_RUNNER_SOCKET_ENV "IGT_RUNNER_SOCKET_FD"
/* The packet types' names, by type number (0-9), for messages. */
#define BCI_IGT_PACKET_NAMES                                                              \
	{ "invalid", "log", "exec", "exit", "subtest start", "subtest result",             \
	  "dynamic subtest start", "dynamic subtest result", "version", "result override" }

#endif

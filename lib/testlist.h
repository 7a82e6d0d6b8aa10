/* SPDX-License-Identifier: MIT */
/*
 * IGT test names and the two list formats around them:
 *  - a testlist (what to run): `igt@<binary>[@<subtest>[@<dynamic>]]` per line,
 *    `#` comments and blank lines ignored;
 *  - igt_runner's joblist.txt (what the run is made of): `<binary>` or
 *    `<binary> <subtest>[,<subtest>...]` per line, a subtest possibly
 *    `<subtest>@<dynamic>`.
 * Names are IGT identifiers: letters, digits, '_' and '-' (subtest names also
 * allow the characters IGT's own tests use: '.', '+', ':'); no white space.
 */
#ifndef BCI_TESTLIST_H
#define BCI_TESTLIST_H

#include <stddef.h>

/*
 * bootci's own plan items in a testlist: `bootci@suspend@<state>[_<pm_test>]@<count>`
 * comes back with binary BCI_IGT_SUSPEND_BINARY (igt_protocol.h), subtest
 * "<state>[_<pm_test>]" and dynamic "<count>" (the suspend module checks the state).
 */
struct bci_test_name {
	char binary[128];
	char subtest[256];  /* "" when the line names the whole binary */
	char dynamic[256];  /* "" when no dynamic subtest is named */
};

/*
 * Parses one testlist line (without its newline). Returns 1 with @name filled,
 * 0 for a blank or comment line, -EINVAL for anything else (message in @err).
 */
int bci_testlist_parse_line(const char *line, struct bci_test_name *name, char *err,
			    size_t err_size);

/* Calls @fn for every test of a testlist text; stops at the first error (file:line in @err). */
int bci_testlist_parse(const char *origin, const char *text, size_t len,
		       int (*fn)(const struct bci_test_name *name, void *data), void *data,
		       char *err, size_t err_size);

struct bci_joblist_entry {
	char *binary;
	char **subtests; /* NULL-terminated; empty for a whole-binary job */
	size_t count;
};

struct bci_joblist {
	struct bci_joblist_entry *entries;
	size_t count;
};

/* Parses joblist.txt; the joblist owns everything it returns. */
int bci_joblist_parse(const char *origin, const char *text, size_t len, struct bci_joblist *list,
		      char *err, size_t err_size);
/* Adds a job; takes copies of the strings. */
int bci_joblist_add(struct bci_joblist *list, const char *binary, const char *const *subtests,
		    size_t count);
/* The joblist.txt text of @list, malloc'ed, owned by the caller. */
int bci_joblist_format(const struct bci_joblist *list, char **text, size_t *len);
void bci_joblist_clear(struct bci_joblist *list);

/*
 * Suspend cycles from the configuration: the values of suspend_before,
 * suspend_between and suspend_after are empty or cycle specs separated by
 * white space, each `<state>[_<pm_test>]@<count>` as in a testlist's
 * bootci@suspend item (count 1-100000, at most BCI_TESTLIST_CYCLE_SPECS_MAX).
 */
#define BCI_TESTLIST_CYCLE_COUNT_MAX 100000
#define BCI_TESTLIST_CYCLE_SPECS_MAX 16

struct bci_testlist_cycle {
	char cycle[256];     /* "<state>[_<pm_test>]"; the planner checks the state */
	unsigned long count;
};

/*
 * Parses @value, the value of configuration key @key, into @specs (room for
 * BCI_TESTLIST_CYCLE_SPECS_MAX). 0 with *@count set, or -EINVAL with
 * "<key>: '<spec>': <what is wrong>" in @err.
 */
int bci_testlist_cycles_parse(const char *key, const char *value, struct bci_testlist_cycle *specs,
			      size_t *count, char *err, size_t err_size);

/*
 * Inserts the configured cycles into a planned joblist: the cycles of
 * @before (value of suspend_before) first, those of @after last, those of
 * @between between every two consecutive test jobs (jobs that are not cycles;
 * placed right before the second, after any cycle jobs of the testlist
 * between the two; in multiple mode a job is one execution of a binary).
 * Every cycle job is then numbered in plan order per <state>[_<pm_test>]
 * from 0001 (`mem-0001`, `mem-0002`, ...), the testlist's own cycles
 * included, so cycle names stay unique and count through the run.
 * 0; -EINVAL for a bad value (message naming the key in @err); -E2BIG when
 * the values would add more than BCI_TESTLIST_CYCLE_COUNT_MAX cycle jobs
 * (message in @err); -ENOMEM. On error @jobs is unchanged.
 */
int bci_joblist_add_cycles(struct bci_joblist *jobs, const char *before, const char *between,
			   const char *after, char *err, size_t err_size);

/*
 * The suspend-cycle grammar, in one place. A cycle kind is
 * `<state>[_<pm_test>]`, the state one of BCI_TESTLIST_SUSPEND_STATES and
 * the optional pm_test level one of BCI_TESTLIST_SUSPEND_PM_TESTS (the
 * kernel's /sys/power/state and /sys/power/pm_test words). A testlist and
 * the suspend_* keys ask for cycles as `<kind>@<count>` (above); the
 * planner names each cycle job's subtest `<kind>-<NNNN>` (number 1 and up,
 * 4 to 9 digits), which is what the executor runs and what
 * bci_testlist_cycle_name_parse() reads back.
 */
#define BCI_TESTLIST_SUSPEND_STATES "freeze, standby, mem, disk"
#define BCI_TESTLIST_SUSPEND_PM_TESTS "freezer, devices, platform, processors, core"

struct bci_testlist_cycle_name {
	char state[16];    /* freeze standby mem disk */
	char pm_test[16];  /* "" when the cycle really sleeps */
	unsigned number;
};

/* Whether @kind (`<state>[_<pm_test>]`) names a known state and pm_test level. */
int bci_testlist_cycle_kind_valid(const char *kind);
/* Parses a cycle job's subtest `<state>[_<pm_test>]-<NNNN>`: 0, or -EINVAL. */
int bci_testlist_cycle_name_parse(const char *cycle, struct bci_testlist_cycle_name *name);

/* Is @name a valid IGT binary / subtest name? */
int bci_igt_name_valid(const char *name, int subtest);

#endif

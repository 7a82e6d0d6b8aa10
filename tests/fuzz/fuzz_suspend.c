// SPDX-License-Identifier: MIT
/*
 * Fuzz target for what the suspend cycles read: the input is read as a cycle
 * name (<state>[_<pm_test>]-NNNN, lib/testlist's grammar), as kernel log
 * records (one per line, as /dev/kmsg gives them) a cycle is measured by, and
 * as a run's suspend-cycles.txt, which the summary is written from.
 */
#include "suspend.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[PATH_MAX];

/* The summary's folder goes when the fuzzer exits (as the other targets' do). */
static void remove_dir(void)
{
	static const char *const names[] = { "suspend-cycles.txt", "suspend-summary.txt" };
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		remove(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_testlist_cycle_name name;
	char *text = strndup((const char *)data, size), path[PATH_MAX + 32];
	FILE *f;

	if (!text)
		return 0;
	if (bci_testlist_cycle_name_parse(text, &name) == 0 && (name.number == 0 || !name.state[0]))
		abort();
	struct bci_suspend_landmarks lm = BCI_SUSPEND_LANDMARKS_INIT;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		bci_suspend_kmsg_record(&lm, line);
		/* nothing is seen before an entry; a wait is never negative nor absurd */
		if ((lm.entry < 0 && (lm.marker >= 0 || lm.exit >= 0)) || !(lm.pm_test_delay >= 0) ||
		    lm.pm_test_delay >= 3600)
			abort();
	}
	free(text);

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/bootci-fuzz-suspend.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	snprintf(path, sizeof(path), "%s/suspend-cycles.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	bci_suspend_summary_write(dir);
	return 0;
}

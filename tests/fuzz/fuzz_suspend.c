// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the suspend cycles' parsers: the input is read as a cycle
 * name (<state>[_<pm_test>]-NNNN) and as a run's suspend-cycles.txt, which
 * the summary is computed from.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_suspend_cycle_name name;
	char *text = strndup((const char *)data, size), path[PATH_MAX + 32];
	FILE *f;

	if (!text)
		return 0;
	if (bci_suspend_cycle_parse(text, &name) == 0 && (name.number == 0 || !name.state[0]))
		abort();
	free(text);

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/bootci-fuzz-suspend.XXXXXX");
		if (!mkdtemp(dir))
			abort();
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

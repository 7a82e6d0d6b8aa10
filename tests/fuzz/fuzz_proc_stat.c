// SPDX-License-Identifier: MIT
/*
 * Fuzz target for bci_spawn_proc_parse() (lib/spawn.c): /proc/PID/stat of a
 * process a test left, whose name the test chooses (prctl PR_SET_NAME may put
 * spaces and parentheses in it). Whatever the input, a parse that succeeds
 * gives a positive pid, a terminated name no longer than the kernel's, and
 * the state as a letter.
 */
#include "spawn.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_spawn_proc p;

	memset(&p, 0x55, sizeof(p));
	if (bci_spawn_proc_parse((const char *)data, size, &p) < 0)
		return 0;
	if (p.pid <= 0 || p.ppid < 0 || p.pgrp < 0 || !isalpha((unsigned char)p.state) ||
	    memchr(p.comm, '\0', sizeof(p.comm)) == NULL)
		abort();
	return 0;
}

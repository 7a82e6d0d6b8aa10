// SPDX-License-Identifier: MIT
/*
 * Fuzz target for collect's reading of the master's answers (outside input:
 * whatever answers at the master's address). Whatever the bytes, the answer
 * to GET of a run must keep its promises: a resume offset never beyond the
 * archive, and one only for a partial upload announced with our digest. The
 * answer to a hello: a state only when it is one of the three, "out" only
 * when it says so, and a note of one line.
 */
#include "../../aggregator/collect/collect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OURS "1111111111111111111111111111111111111111111111111111111111111111"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = malloc(size + 1), err[256];
	uint64_t received = 12345;
	enum bci_collect_master_state state;
	struct bci_collect_hello hello;

	if (!body)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	state = bci_collect_master_state_parse(body, size, OURS, 1000, &received, err, sizeof(err));
	if (received > 1000)
		abort();
	if (received > 0 && (state != BCI_MASTER_SEND || !strstr(body, OURS)))
		abort();
	if (bci_collect_hello_parse(body, size, &hello, err, sizeof(err)) == 0) {
		if (strcmp(hello.state, "ready") && strcmp(hello.state, "out") &&
		    strcmp(hello.state, "unscheduled"))
			abort();
		if (hello.out != !strcmp(hello.state, "out") || strchr(hello.note, '\n'))
			abort();
	} else if (hello.out || hello.state[0]) {
		abort();
	}
	free(body);
	return 0;
}

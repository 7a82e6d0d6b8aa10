// SPDX-License-Identifier: MIT
/*
 * Fuzz target for lib/runner_comms.c and the results generator's comms
 * judge (lib/resultgen/comms.c). The input is a comms dump: every whole
 * record is decoded, and a complete packet of a known type must encode back
 * to a packet that decodes to the same fields; the dump is then the comms
 * file of a one-job results directory (joblist "fuzz a,b") that the
 * generator judges. Errors are fine (a packet order igt_results rejects is
 * one); crashes, leaks and hangs are not.
 */
#include "resultgen/resultgen.h"
#include "runner_comms.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz_runner_comms.XXXXXX";
static char *made;

static const char *const names[] = {
	"metadata.txt", "joblist.txt", "0/journal.txt", "0/out.txt", "0/err.txt", "0/dmesg.txt",
	"0/comms", "0",
};

static void write_file(const char *name, const void *data, size_t size)
{
	char path[sizeof(dir) + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", made, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
}

static void remove_results(void)
{
	char path[sizeof(dir) + 32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", made, names[i]);
		remove(path);
	}
	rmdir(made);
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A complete packet encodes back to one with the same fields. */
static void round_trip(const struct bci_comms_packet *p)
{
	struct bci_comms_packet again;
	static unsigned char buf[BCI_COMMS_MAX_PACKET + 64];
	ssize_t n;

	if (!p->complete || p->type == BCI_COMMS_INVALID || p->type >= BCI_COMMS_TYPE_COUNT)
		return;
	n = bci_comms_packet_encode(p, buf, sizeof(buf));
	if (n < (ssize_t)BCI_COMMS_HEADER_SIZE || (size_t)n > p->size)
		abort();
	if (bci_comms_packet_decode(buf, (size_t)n, &again) < 0 || !again.complete ||
	    again.type != p->type || again.stream != p->stream ||
	    again.exit_status != p->exit_status || !same(again.text, p->text) ||
	    !same(again.name, p->name) || !same(again.result, p->result) ||
	    !same(again.time, p->time) || !same(again.reason, p->reason))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_resultgen_options options = { 0 };
	struct bci_comms_packet p;
	size_t pos = 0, valid;
	char path[sizeof(dir) + 32], err[512];
	FILE *out;
	int ret;

	if (!made) {
		made = mkdtemp(dir);
		if (!made)
			abort();
		snprintf(path, sizeof(path), "%s/0", made);
		if (mkdir(path, 0755) < 0)
			abort();
		write_file("metadata.txt", "name : fuzz\n", 12);
		write_file("joblist.txt", "fuzz a,b\n", 9);
		for (size_t i = 2; i < 6; i++)
			write_file(names[i], "", 0);
		atexit(remove_results);
	}
	while ((ret = bci_comms_next((const char *)data, size, &pos, &p, err, sizeof(err))) == 1) {
		if (p.size < BCI_COMMS_HEADER_SIZE || pos > size)
			abort();
		round_trip(&p);
	}
	valid = bci_comms_valid_prefix((const char *)data, size);
	if (valid != pos || (ret == 0) != (valid == size))
		abort();

	write_file("0/comms", data, size);
	out = fopen("/dev/null", "w");
	options.warnings = out;
	snprintf(path, sizeof(path), "%s", made);
	bci_resultgen_write_options(path, out, &options, err, sizeof(err));
	fclose(out);
	return 0;
}

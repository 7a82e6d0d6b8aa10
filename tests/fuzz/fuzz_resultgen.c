// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the results generator's own parsers (lib/resultgen/):
 * metadata.txt, journal.txt and dmesg.txt, with out.txt and err.txt. The
 * input is those five files one after another, split at "\n~~\n", written
 * as a one-job results directory; the generator runs with a 512-byte file
 * limit so that condensing over-limit files is explored too. Errors are
 * fine (a malformed journal is one); crashes, leaks and hangs are not.
 */
#include "resultgen/resultgen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz_resultgen.XXXXXX";
static char *made;

static void write_file(const char *name, const uint8_t *data, size_t size)
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

static const char *const names[] = {
	"metadata.txt", "0/journal.txt", "0/dmesg.txt", "0/out.txt", "0/err.txt", "joblist.txt", "0",
};

/* The results directory goes when the fuzzer exits. */
static void remove_results(void)
{
	char path[sizeof(dir) + 32];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", made, names[i]);
		remove(path);
	}
	rmdir(made);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_resultgen_options options = { 0 };
	const uint8_t *p = data, *end = data + size;
	char path[sizeof(dir) + 32], err[512];
	FILE *out;
	size_t i;

	if (!made) {
		made = mkdtemp(dir);
		if (!made)
			abort();
		snprintf(path, sizeof(path), "%s/0", made);
		if (mkdir(path, 0755) < 0)
			abort();
		write_file("joblist.txt", (const uint8_t *)"fuzz a,b\n", 9);
		atexit(remove_results);
	}
	for (i = 0; i < 5; i++) {
		const uint8_t *sep = p < end ? memmem(p, (size_t)(end - p), "\n~~\n", 4) : NULL;
		const uint8_t *stop = sep ? sep + 1 : end;

		write_file(names[i], p, (size_t)(stop - p));
		p = sep ? sep + 4 : end;
	}
	out = fopen("/dev/null", "w");
	options.warnings = out;
	options.max_file = 512;
	if (!out)
		abort();
	bci_resultgen_write_options(made, out, &options, err, sizeof(err));
	fclose(out);
	return 0;
}

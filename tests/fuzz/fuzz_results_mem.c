// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the results generator's memory source (resultgen.h:
 * bci_results_job_reader_new_mem, bci_results_job_walk_mem,
 * bci_results_aborted_walk_mem), as ingest hands it an uploaded archive's
 * files: the input lists files as fuzz_results_walk's does, entries
 * separated by "\n~~\n", each "f NAME\nCONTENT" (any NAME: the source
 * is a list, not a folder). Every test handed out has a known result,
 * nothing hangs or leaks, and what is refused stops cleanly; the file
 * limit is 512 bytes so that condensing is explored.
 */
#include "resultgen/resultgen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILES_MAX 64

static int check_test(enum bci_results_event event, const struct bci_results_run *run,
		      const struct bci_results_test *test, void *ctx)
{
	(void)ctx;
	if (!run || !run->name)
		abort();
	if (event != BCI_RESULTS_TEST)
		return 0;
	if (!test || !test->name[0] || !test->result || bci_igt_result_index(test->result) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_resultgen_options options = { .max_file = 512 };
	struct bci_results_mem_file files[FILES_MAX];
	struct bci_results_mem mem = { files, 0 };
	char names[FILES_MAX][128], err[512];
	const char *p = (const char *)data, *end = p + size;
	struct bci_results_job_reader *reader;

	while (p < end && mem.count < FILES_MAX) {
		const char *sep = memmem(p, (size_t)(end - p), "\n~~\n", 4);
		const char *stop = sep ? sep : end, *nl = memchr(p, '\n', (size_t)(stop - p));
		size_t head = nl ? (size_t)(nl - p) : (size_t)(stop - p);

		if (head > 2 && head < sizeof(names[0]) + 2 && p[0] == 'f' && p[1] == ' ') {
			memcpy(names[mem.count], p + 2, head - 2);
			names[mem.count][head - 2] = '\0';
			files[mem.count] = (struct bci_results_mem_file){
				.path = names[mem.count], .data = nl ? nl + 1 : stop,
				.len = nl ? (size_t)(stop - nl - 1) : 0, .fd = -1,
			};
			mem.count++;
		}
		p = sep ? sep + 4 : end;
	}
	options.warnings = fopen("/dev/null", "w");
	if (!options.warnings)
		abort();
	if (bci_results_job_reader_new_mem("fuzz", &mem, &options, &reader, err, sizeof(err)) == 0) {
		size_t jobs = bci_results_job_reader_count(reader);

		if (!bci_results_job_reader_run(reader)->name)
			abort();
		/* Every job from the same list, then one walked again from nothing (notrun). */
		for (size_t job = 0; job < jobs && job < 8; job++)
			bci_results_job_walk_mem(reader, job, &mem, NULL, check_test, NULL, err,
						 sizeof(err));
		if (jobs)
			bci_results_job_walk_mem(reader, 0, NULL, NULL, check_test, NULL, err, sizeof(err));
		bci_results_aborted_walk_mem(reader, &mem, check_test, NULL, err, sizeof(err));
		bci_results_job_reader_free(reader);
	}
	fclose(options.warnings);
	return 0;
}

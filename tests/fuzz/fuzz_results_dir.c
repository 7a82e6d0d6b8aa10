// SPDX-License-Identifier: MIT
/*
 * Fuzz target for lib/results_dir.c's line readers: the input as journal.txt
 * lines, bootci-journal.txt lines (and as an end's rest), "key value" lines,
 * suspend-cycles.txt (and the summary made from it), test/result.txt; what the
 * writers make of a parsed journal, end or cycle line parses back the same.
 */
#include "results_dir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size), *copy, *cursor, *key, *value;
	struct bci_suspend_summary summary;
	char out[1024];

	if (!text)
		return 0;
	copy = strdup(text);
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct bci_job_journal_line j;
		struct bci_suspend_cycle_line c, again;

		struct bci_run_journal_line r, r2;
		char formatted[BCI_RUN_JOURNAL_LINE_MAX + 64];

		if (bci_run_journal_parse_line(line, &r) == 0) {
			int n = bci_run_journal_format_line(formatted, sizeof(formatted), &r);

			if (n <= 0 || (size_t)n >= sizeof(formatted))
				abort();
			formatted[n - 1] = '\0';
			if (bci_run_journal_parse_line(formatted, &r2) < 0 || r2.kind != r.kind ||
			    r2.job != r.job || strcmp(r2.rest, r.rest))
				abort();
		}
		struct bci_run_journal_end end, end2;
		if (bci_run_journal_end_parse(line, &end) == 0) {
			int n = bci_run_journal_end_format(formatted, sizeof(formatted), &end);

			if (n <= 0 || (size_t)n >= sizeof(formatted) ||
			    bci_run_journal_end_parse(formatted, &end2) < 0 ||
			    end2.status != end.status ||
			    memcmp(end2.bytes, end.bytes, sizeof(end.bytes)))
				abort();
		}
		bci_job_journal_parse_line(line, false, &j);
		bci_job_journal_parse_line(line, true, &j);
		if (bci_suspend_cycle_line_parse(line, &c) == 0) {
			bci_suspend_cycle_line_format(out, sizeof(out), &c);
			if (bci_suspend_cycle_line_parse(out, &again) < 0 ||
			    strcmp(again.cycle, c.cycle) || strcmp(again.result, c.result))
				abort();
		}
	}
	free(copy);
	if (bci_suspend_summary_compute(text, strlen(text), &summary) == 0) {
		if (summary.pass + summary.fail != summary.cycles)
			abort();
		bci_suspend_summary_format(out, sizeof(out), &summary);
	}
	copy = strdup(text);
	if (copy) {
		struct bci_test_program_result program;
		const char *name;

		if (bci_test_program_result_parse(copy, &program, out, sizeof(out)) == 0) {
			name = bci_test_program_result_name(&program);
			if (!program.command || !*program.command ||
			    (strcmp(name, "pass") && strcmp(name, "fail") && strcmp(name, "timeout") &&
			     strcmp(name, "incomplete")))
				abort();
		}
		free(copy);
	}
	cursor = text;
	while (bci_results_kv_next(&cursor, &key, &value)) {
		struct bci_suspend_spread spread;
		long long count;

		if (!key[0] || strchr(key, ' ') || strchr(key, '\n'))
			abort();
		bci_suspend_summary_value(value, &count, &spread);
	}
	free(text);
	return 0;
}

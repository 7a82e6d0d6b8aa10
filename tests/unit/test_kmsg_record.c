// SPDX-License-Identifier: MIT
/* lib/kmsg_record.c: the one parser of /dev/kmsg records and its writers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kmsg_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void records_and_continuations(void **state)
{
	static const char line[] = "4,1234,5678901,-;i915 0000:00:02.0: [drm] *ERROR* oops\n";
	struct bci_kmsg_record r;

	(void)state;
	assert_true(bci_kmsg_record_parse(line, sizeof(line) - 1, &r));
	assert_int_equal(r.prio, 4);
	assert_int_equal(bci_kmsg_record_level(&r), 4);
	assert_int_equal(r.seq, 1234);
	assert_int_equal(r.usec, 5678901);
	assert_int_equal(r.flags, '-');
	assert_int_equal(r.text_len, strlen("i915 0000:00:02.0: [drm] *ERROR* oops\n"));
	/* Facility user (8) + level 6; extra fields before ';' are allowed. */
	assert_true(bci_kmsg_record_parse("14,7,8,c,caller=T1;x", 20, &r));
	assert_int_equal(bci_kmsg_record_level(&r), 6);
	assert_int_equal(r.flags, 'c');
	assert_int_equal(r.text_len, 1);
	assert_false(bci_kmsg_record_parse(" SUBSYSTEM=pci\n", 15, &r));
	assert_false(bci_kmsg_record_parse("6,1,2;no flag\n", 14, &r));
	assert_false(bci_kmsg_record_parse("6,1,2,-no semicolon\n", 20, &r));
	assert_false(bci_kmsg_record_parse("", 0, &r));
	/* A NUL ends the record: nothing after it is read. */
	assert_false(bci_kmsg_record_parse("6,1\0,2,-;x", 10, &r));
	assert_true(bci_kmsg_record_parse("6,1,2,-;ab\0cd", 13, &r));
	assert_int_equal(r.text_len, 2);
}

/* Numbers read as strtoul() reads them (igt_runner's sscanf %u): one answer with libc. */
static void numbers_as_strtoul_reads_them(void **state)
{
	static const char *const fields[] = { "6", " 6", "+6", "-1", "007", "4294967301",
					      "99999999999999999999999", "-0" };
	char line[128];
	struct bci_kmsg_record r;

	(void)state;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		snprintf(line, sizeof(line), "%s,%s,%s,-;t", fields[i], fields[i], fields[i]);
		assert_true(bci_kmsg_record_parse(line, strlen(line), &r));
		assert_int_equal(r.prio, (unsigned)strtoul(fields[i], NULL, 10));
		assert_true(r.seq == strtoull(fields[i], NULL, 10));
		assert_true(r.usec == strtoull(fields[i], NULL, 10));
	}
}

static void writer_round_trips(void **state)
{
	char buf[128];
	struct bci_kmsg_record r;
	int n;

	(void)state;
	n = bci_kmsg_record_format(buf, sizeof(buf), 8 + 4, 0, 1500000, '-', "[bootci] job 3\n");
	assert_string_equal(buf, "12,0,1500000,-;[bootci] job 3\n");
	assert_true(bci_kmsg_record_parse(buf, (size_t)n, &r));
	assert_int_equal(bci_kmsg_record_level(&r), 4);
	assert_int_equal(r.usec, 1500000);
	assert_int_equal(r.text_len, strlen("[bootci] job 3\n"));
}

static void readable_form_decodes_escapes(void **state)
{
	static const char line[] = "3,1,12000345,-;a\\x41b\\x0ac\\x01d\\x5\n";
	struct bci_str out = { 0 };
	struct bci_kmsg_record r;

	(void)state;
	assert_true(bci_kmsg_record_parse(line, sizeof(line) - 1, &r));
	assert_int_equal(bci_kmsg_record_format_readable(&out, &r), 0);
	/* \x41 and \x0a decode; \x01 is not printable; "\x5\n" is too short to try. */
	assert_string_equal(out.data, "<3> [12.000345] aAb\nc\\x01d\\x5\n");
	bci_str_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_and_continuations),
		cmocka_unit_test(numbers_as_strtoul_reads_them),
		cmocka_unit_test(writer_round_trips),
		cmocka_unit_test(readable_form_decodes_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * aggregator/master/mail/: the message as SMTP sends it (CRLF lines, the
 * mbox framing undone, dots left for libcurl), its envelope read from its
 * headers, DATA/mail.conf's checks, and the store's outbox on SQLite:
 * queued once, claimed once, sent or failed for good, retried when due.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/mail/mail.h"
#include "../../aggregator/master/store/store.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *convert(const char *mbox, int expect)
{
	char err[256] = "", *out = NULL;
	size_t len = 0;
	int ret = bci_mail_from_mbox(mbox, strlen(mbox), &out, &len, err, sizeof(err));

	assert_int_equal(ret, expect);
	if (ret == 0)
		assert_int_equal(len, strlen(out));
	else
		assert_true(err[0]);
	return out;
}

static void test_from_mbox(void **state)
{
	char *out;

	(void)state;
	/* report/mbox.c's shape: a From_ line, LF lines, a quoted From, the blank line ending it. */
	out = convert("From bootci Sun Dec  6 10:00:00 2026\n"
		      "From: bootci <ci@lab.example>\n"
		      "Subject: x\n"
		      "\n"
		      "body\n"
		      ">From the start\n"
		      ">>From twice\n"
		      ">not from\n"
		      ".\n"
		      "..two dots\n"
		      "\n", 0);
	assert_string_equal(out, "From: bootci <ci@lab.example>\r\n"
				 "Subject: x\r\n"
				 "\r\n"
				 "body\r\n"
				 "From the start\r\n"
				 ">From twice\r\n"
				 ">not from\r\n"
				 ".\r\n"
				 "..two dots\r\n");
	free(out);
	/* A message without a From_ line is a message, not an mbox: nothing unquoted or dropped. */
	out = convert("Subject: y\r\n\r\n>From kept\r\nend\r\n\r\n", 0);
	assert_string_equal(out, "Subject: y\r\n\r\n>From kept\r\nend\r\n\r\n");
	free(out);
	/* The headers' blank line is never taken for the mbox's. */
	out = convert("From x Sun Dec  6 10:00:00 2026\nSubject: z\n\n", 0);
	assert_string_equal(out, "Subject: z\r\n\r\n");
	free(out);
	/* A last line without its LF gets its CRLF. */
	out = convert("Subject: w\n\nno newline", 0);
	assert_string_equal(out, "Subject: w\r\n\r\nno newline\r\n");
	free(out);
	convert("Subject: v\n\nbare\rCR\n", -EINVAL);
	convert("Subject: no body and no blank line\n", -EINVAL);
	convert("From x Sun Dec  6 10:00:00 2026\n\nno headers\n", -EINVAL);
	assert_int_equal(bci_mail_from_mbox("Subject: a\n\n\0b\n", 16, &out, &(size_t){ 0 },
					    (char[64]){ 0 }, 64), -EINVAL);
}

static void test_envelope(void **state)
{
	struct bci_mail_envelope e;
	char err[256], address[128];

	(void)state;
	assert_int_equal(bci_mail_envelope_read(
		"From: bootci <ci@lab.example>\r\n"
		"To: intel-gfx@lists.example,\r\n"
		" \"Doe, Jane\" <jane@doe.example>\r\n"
		"Cc: bob@x.example\r\n"
		"Message-ID: <bootci.b1.1@lab.example>\r\n"
		"\r\n"
		"To: not-a-header@x.example\r\n", &e, err, sizeof(err)), 0);
	assert_string_equal(e.message_id, "<bootci.b1.1@lab.example>");
	assert_string_equal(e.from, "ci@lab.example");
	assert_string_equal(e.recipients, "intel-gfx@lists.example\njane@doe.example\nbob@x.example\n");
	bci_mail_envelope_free(&e);

	assert_int_equal(bci_mail_envelope_read("To: a@b.example\r\n\r\n", &e, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "Message-ID"));
	assert_int_equal(bci_mail_envelope_read("Message-ID: <a@b>\r\n\r\n", &e, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "recipient"));
	assert_int_equal(bci_mail_envelope_read("Message-ID: <a@b>\r\nTo: not an address\r\n\r\n",
						&e, err, sizeof(err)), -EINVAL);

	assert_int_equal(bci_mail_address("  a@b.example ", address, sizeof(address)), 0);
	assert_string_equal(address, "a@b.example");
	assert_int_equal(bci_mail_address("A <a@b>", address, sizeof(address)), 0);
	assert_string_equal(address, "a@b");
	assert_int_equal(bci_mail_address("A <a@b", address, sizeof(address)), -EINVAL);
	assert_int_equal(bci_mail_address("no-at-sign", address, sizeof(address)), -EINVAL);
	assert_int_equal(bci_mail_address("a b@c", address, sizeof(address)), -EINVAL);
	assert_int_equal(bci_mail_address("<a@b\r\nRCPT TO:x@y>", address, sizeof(address)),
			 -EINVAL);
}

static int tmpdir_setup(void **state)
{
	char *dir = malloc(PATH_MAX);

	assert_non_null(dir);
	snprintf(dir, PATH_MAX, "/tmp/test_mail.XXXXXX");
	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int tmpdir_teardown(void **state)
{
	bci_remove_tree(*state);
	free(*state);
	return 0;
}

static int config_try(const char *dir, const char *text, struct bci_mail_config *c, char *err,
		      size_t err_size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/mail.conf", dir);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0600), 0);
	return bci_mail_config_load(dir, c, err, err_size);
}

static void test_config(void **state)
{
	struct bci_mail_config c;
	char err[PATH_MAX + 256];

	assert_int_equal(bci_mail_config_load(*state, &c, err, sizeof(err)), -ENOENT);
	assert_int_equal(config_try(*state, "url = smtp://127.0.0.1:2525/lab.example\n"
				    "from = bootci <ci@lab.example>\nstarttls = required\n"
				    "retry-first = 5s\n", &c, err, sizeof(err)), 0);
	assert_string_equal(c.sender, "ci@lab.example");
	assert_true(c.starttls);
	assert_null(c.to);
	assert_int_equal(c.retry_first, 5);
	assert_int_equal(c.retry_max, 3600);
	bci_mail_config_free(&c);
	assert_int_equal(config_try(*state, "from = a@b\n", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "required"));
	assert_int_equal(config_try(*state, "url = http://x\nfrom = a@b\n", &c, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "url"));
	assert_int_equal(config_try(*state, "url = smtps://x\nfrom = a@b\nstarttls = required\n",
				    &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(config_try(*state, "url = smtp://x\nfrom = a@b\nauth-file = rel\n", &c,
				    err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "auth-file"));
	assert_int_equal(config_try(*state, "url = smtp://x\nfrom = a@b\npassword = x\n", &c, err,
				    sizeof(err)), -EINVAL);
}

struct seen {
	int count;
	int64_t key;
	char state[16];
	int attempts;
	char error[128];
};

static int seen_one(const struct bci_store_mail *mail, void *ctx)
{
	struct seen *s = ctx;

	s->count++;
	s->key = mail->key;
	s->attempts = mail->attempts;
	snprintf(s->state, sizeof(s->state), "%s", mail->state);
	snprintf(s->error, sizeof(s->error), "%s", mail->last_error ? mail->last_error : "");
	return 0;
}

/*
 * On SQLite in the test's folder, or on the PostgreSQL of $BOOTCI_TEST_STORE_URL
 * (tests/aggregator/store-postgres.t): there the names carry the process id, so that
 * a suite run again (its ASan build) finds none of its own.
 */
static void test_outbox(void **state)
{
	const char *url = getenv("BOOTCI_TEST_STORE_URL");
	char err[PATH_MAX + 256], r1[64], r2[64], build[32];
	struct bci_store *store;
	struct seen seen = { 0 };
	int64_t key = -1;

	snprintf(r1, sizeof(r1), "<r1.%d@lab.example>", (int)getpid());
	snprintf(r2, sizeof(r2), "<r2.%d@lab.example>", (int)getpid());
	snprintf(build, sizeof(build), "b1.%d", (int)getpid());
	if (bci_store_open(url, *state, &store, err, sizeof(err)) < 0)
		fail_msg("open %s: %s", url ? url : "sqlite", err);
	struct bci_store_mail mail = { .message_id = r1, .build = build,
				       .sender = "ci@lab.example", .recipients = "l@x\n",
				       .message = "Subject: a\r\n\r\nb\r\n", .created = 1000 };
	assert_int_equal(bci_store_mail_queue(store, &mail, &key, err, sizeof(err)), 0);
	assert_true(key > 0);
	/* Queued once: the same Message-ID again changes nothing. */
	mail.message = "Subject: another text\r\n\r\n";
	assert_int_equal(bci_store_mail_queue(store, &mail, NULL, err, sizeof(err)), 1);
	assert_int_equal(bci_store_mail_each(store, build, seen_one, &seen, err, sizeof(err)), 1);
	assert_int_equal(bci_store_mail_each(store, "no-such-build", NULL, NULL, err, sizeof(err)), 0);
	assert_string_equal(seen.state, "queued");
	assert_int_equal(bci_store_mail_due(store, 999, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_due(store, 1000, NULL, NULL, err, sizeof(err)), 1);
	/* Claimed once: a second sender does not get it, nor does anyone before it is due again. */
	assert_int_equal(bci_store_mail_claim(store, key, 1000, 1100, err, sizeof(err)), 1);
	assert_int_equal(bci_store_mail_claim(store, key, 1000, 1100, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_due(store, 1050, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_retry(store, key, 1, 1060, "451 later", err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_due(store, 1059, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_due(store, 1060, NULL, NULL, err, sizeof(err)), 1);
	assert_int_equal(bci_store_mail_claim(store, key, 1060, 1200, err, sizeof(err)), 1);
	assert_int_equal(bci_store_mail_sent(store, key, 1061, 2, err, sizeof(err)), 0);
	/* Sent is for good: never due again, never failed after. */
	assert_int_equal(bci_store_mail_due(store, 1e12, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_failed(store, key, 3, "late", err, sizeof(err)), 0);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(bci_store_mail_get(store, r1, seen_one, &seen, err,
					    sizeof(err)), 1);
	assert_string_equal(seen.state, "sent");
	assert_int_equal(seen.attempts, 2);
	assert_string_equal(seen.error, "");

	/* Failed is for good too, its reason kept. */
	mail = (struct bci_store_mail){ .message_id = r2, .sender = "ci@lab.example",
					.recipients = "l@x\n", .message = "S: b\r\n\r\n",
					.created = 2000 };
	assert_int_equal(bci_store_mail_queue(store, &mail, &key, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_failed(store, key, 1, "550 no", err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_due(store, 1e12, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_claim(store, key, 1e12, 1e12, err, sizeof(err)), 0);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(bci_store_mail_get(store, r2, seen_one, &seen, err,
					    sizeof(err)), 1);
	assert_string_equal(seen.state, "failed");
	assert_string_equal(seen.error, "550 no");
	assert_int_equal(bci_store_mail_get(store, "<none@x>", NULL, NULL, err, sizeof(err)), 0);
	/* What a message needs. */
	mail.message_id = "";
	assert_int_equal(bci_store_mail_queue(store, &mail, NULL, err, sizeof(err)), -EINVAL);
	bci_store_close(store);
}

static int final_seen(const char *build, void *ctx)
{
	char *names = ctx;

	strcat(names, build);
	strcat(names, " ");
	return 0;
}

static void build_add(struct bci_store *store, const char *name, const char *message_id)
{
	struct bci_store_build b = { .name = name, .tree = "t", .commit = "c", .tier = "fast",
				     .message_id = message_id };
	char err[256];

	if (bci_store_build_put(store, &b, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

/*
 * A build's reply is due when it answers a series, every job it was given
 * has ended and, when it has a fast tier, its gate decided (issue 37).
 */
static void test_builds_final(void **state)
{
	char err[PATH_MAX + 256], names[256] = "";
	struct bci_store *store;
	int64_t job = -1, other = -1;

	assert_int_equal(bci_store_open(NULL, *state, &store, err, sizeof(err)), 0);
	build_add(store, "series", "<cover@x>");
	build_add(store, "no-series", NULL);
	build_add(store, "no-jobs", "<cover2@x>");
	struct bci_store_job j = { .machine = "m1", .build = "series", .tier = "fast",
				   .shards = 1, .testlist = "", .run_id = "r1" };
	assert_int_equal(bci_store_job_add(store, &j, &job, err, sizeof(err)), 0);
	j.run_id = "r2";
	assert_int_equal(bci_store_job_add(store, &j, &other, err, sizeof(err)), 0);
	j.build = "no-series";
	j.run_id = "r3";
	assert_int_equal(bci_store_job_add(store, &j, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_job_update(store, job, "done", 1, 1, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_builds_final(store, final_seen, names, err, sizeof(err)), 0);
	assert_int_equal(bci_store_job_end(store, other, "abandoned", "x", 0, err, sizeof(err)), 0);
	/* Its fast tier's jobs all ended: it still waits for the gate (reruns come first). */
	assert_int_equal(bci_store_mail_builds_final(store, final_seen, names, err, sizeof(err)), 0);
	assert_int_equal(bci_store_gate_put(store, "series", "skipped: x", err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_builds_final(store, final_seen, names, err, sizeof(err)), 1);
	assert_string_equal(names, "series ");
	struct bci_store_mail mail = { .message_id = "<reply@x>", .build = "series",
				       .sender = "a@b", .recipients = "c@d\n", .message = "S: x\r\n\r\n" };
	assert_int_equal(bci_store_mail_queue(store, &mail, NULL, err, sizeof(err)), 0);
	assert_int_equal(bci_store_mail_builds_final(store, NULL, NULL, err, sizeof(err)), 0);
	/* One message a build: another Message-ID for it is refused, saying why. */
	mail.message_id = "<reply-again@x>";
	assert_int_equal(bci_store_mail_queue(store, &mail, NULL, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "build series already has a message"));
	bci_store_close(store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_mbox),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test_setup_teardown(test_config, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outbox, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_builds_final, tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

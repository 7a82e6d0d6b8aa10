// SPDX-License-Identifier: MIT
/*
 * The mail outbox's part of the store (store.h, "the mail outbox"): its
 * statements, kept here so that the outbox's SQL reads in one place;
 * database.c runs its migration (7) in its sequence.
 *
 * A message goes queued -> sent, or queued -> failed; nothing goes back.
 * A sender first claims a due message (S_MAIL_CLAIM moves its next_attempt
 * past the attempt's end, only if it is still queued and due), so a second
 * sender on the same store (the `mail send` command beside serve's loop, or
 * two masters on one PostgreSQL) skips it.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAIL_COLUMNS \
	"SELECT id, message_id, build, sender, recipients, message, state, attempts, created," \
	" next_attempt, sent, last_error FROM mail_outbox"

static const char *const statements[S_PATCHWORK_FIRST - S_MAIL_FIRST] = {
	[S_MAIL_QUEUE - S_MAIL_FIRST] =
		"INSERT INTO mail_outbox (message_id, build, sender, recipients, message, state,"
		" attempts, created, next_attempt) VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?)"
		" ON CONFLICT (message_id) DO NOTHING RETURNING id",
	[S_MAIL_DUE - S_MAIL_FIRST] =
		MAIL_COLUMNS " WHERE state = 'queued' AND next_attempt <= ? ORDER BY id",
	[S_MAIL_CLAIM - S_MAIL_FIRST] =
		"UPDATE mail_outbox SET next_attempt = ? WHERE id = ? AND state = 'queued'"
		" AND next_attempt <= ? RETURNING id",
	[S_MAIL_SENT - S_MAIL_FIRST] =
		"UPDATE mail_outbox SET state = 'sent', sent = ?, attempts = ?, last_error = NULL"
		" WHERE id = ?",
	[S_MAIL_RETRY - S_MAIL_FIRST] =
		"UPDATE mail_outbox SET attempts = ?, next_attempt = ?, last_error = ?"
		" WHERE id = ? AND state = 'queued'",
	[S_MAIL_FAILED - S_MAIL_FIRST] =
		"UPDATE mail_outbox SET state = 'failed', attempts = ?, last_error = ?"
		" WHERE id = ? AND state = 'queued'",
	[S_MAIL_ALL - S_MAIL_FIRST] = MAIL_COLUMNS " ORDER BY id",
	[S_MAIL_BUILD - S_MAIL_FIRST] = MAIL_COLUMNS " WHERE build = ? ORDER BY id",
	[S_MAIL_GET - S_MAIL_FIRST] = MAIL_COLUMNS " WHERE message_id = ?",
	[S_MAIL_BUILDS_FINAL - S_MAIL_FIRST] =
		"SELECT b.name FROM builds b WHERE b.message_id IS NOT NULL"
		" AND EXISTS (SELECT 1 FROM schedule_jobs j WHERE j.build = b.id)"
		" AND NOT EXISTS (SELECT 1 FROM schedule_jobs j WHERE j.build = b.id"
		"   AND j.state NOT IN ('done', 'abandoned'))"
		" AND NOT EXISTS (SELECT 1 FROM mail_outbox o WHERE o.build = b.name)"
		/* A fast tier's reply waits for its gate: the reruns it may queue first. */
		" AND (EXISTS (SELECT 1 FROM schedule_gates g WHERE g.build = b.id)"
		"   OR NOT EXISTS (SELECT 1 FROM schedule_jobs j WHERE j.build = b.id"
		"     AND j.tier = 'fast' AND j.kind IS NULL))"
		" ORDER BY b.id",
};

static int query(struct bci_store *store, enum bci_store_statement id,
		 const struct bci_store_value *params, int n_params, bci_store_row_fn row, void *ctx,
		 char *err, size_t err_size)
{
	return bci_store_query_text(store, id, statements[id - S_MAIL_FIRST], params, n_params,
				    row, ctx, err, err_size);
}

int bci_store_mail_queue(struct bci_store *store, const struct bci_store_mail *mail, int64_t *key,
			 char *err, size_t err_size)
{
	double created = mail->created > 0 ? mail->created : bci_store_now();
	int64_t id = -1;
	int ret;

	if (!mail->message_id || !*mail->message_id || !mail->sender || !mail->recipients ||
	    !*mail->recipients || !mail->message) {
		snprintf(err, err_size, "outbox: a message needs a Message-ID, a sender, recipients"
			 " and its text");
		return -EINVAL;
	}
	struct bci_store_value params[] = {
		value_text(mail->message_id), value_text(mail->build), value_text(mail->sender),
		value_text(mail->recipients), value_text(mail->message), value_real(created, 0),
		value_real(created, 0),
	};
	ret = query(store, S_MAIL_QUEUE, params, 7, bci_store_row_first_int, &id, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "build %s already has a message in the outbox", mail->build);
	if (ret < 0)
		return ret;
	if (id < 0)
		return 1;	/* DO NOTHING: that Message-ID is already there */
	if (key)
		*key = id;
	return 0;
}

struct mail_walk {
	int (*fn)(const struct bci_store_mail *mail, void *ctx);
	void *ctx;
	int count;
};

static int row_mail(const struct bci_store_value *c, int n, void *ctx)
{
	struct mail_walk *walk = ctx;
	struct bci_store_mail mail;

	if (n < 12)
		return -EPROTO;
	mail = (struct bci_store_mail){
		.key = column_int(&c[0], -1),
		.message_id = column_text(&c[1]),
		.build = column_text(&c[2]),
		.sender = column_text(&c[3]),
		.recipients = column_text(&c[4]),
		.message = column_text(&c[5]),
		.state = column_text(&c[6]),
		.attempts = (int)column_int(&c[7], 0),
		.created = column_real(&c[8], 0),
		.next_attempt = column_real(&c[9], 0),
		.sent = column_real(&c[10], 0),
		.last_error = column_text(&c[11]),
	};
	walk->count++;
	return walk->fn ? walk->fn(&mail, walk->ctx) : 0;
}

int bci_store_mail_due(struct bci_store *store, double now,
		       int (*fn)(const struct bci_store_mail *mail, void *ctx), void *ctx,
		       char *err, size_t err_size)
{
	struct bci_store_value param = value_real(now, -1e300);
	struct mail_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_MAIL_DUE, &param, 1, row_mail, &walk, err, err_size);

	return ret ? ret : walk.count;
}

int bci_store_mail_claim(struct bci_store *store, int64_t key, double now, double until,
			 char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_real(until, -1e300), value_int(key),
					    value_real(now, -1e300) };
	int64_t id = -1;
	int ret = query(store, S_MAIL_CLAIM, params, 3, bci_store_row_first_int, &id, err, err_size);

	return ret < 0 ? ret : id == key;
}

int bci_store_mail_sent(struct bci_store *store, int64_t key, double when, int attempts,
			char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_real(when, -1e300), value_int(attempts),
					    value_int(key) };

	return query(store, S_MAIL_SENT, params, 3, NULL, NULL, err, err_size);
}

int bci_store_mail_retry(struct bci_store *store, int64_t key, int attempts, double next_attempt,
			 const char *error, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_int(attempts), value_real(next_attempt, -1e300),
					    value_text(error), value_int(key) };

	return query(store, S_MAIL_RETRY, params, 4, NULL, NULL, err, err_size);
}

int bci_store_mail_failed(struct bci_store *store, int64_t key, int attempts, const char *error,
			  char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_int(attempts), value_text(error), value_int(key) };

	return query(store, S_MAIL_FAILED, params, 3, NULL, NULL, err, err_size);
}

int bci_store_mail_each(struct bci_store *store, const char *build,
			int (*fn)(const struct bci_store_mail *mail, void *ctx), void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value param = value_text(build);
	struct mail_walk walk = { fn, ctx, 0 };
	int ret;

	if (build)
		ret = query(store, S_MAIL_BUILD, &param, 1, row_mail, &walk, err, err_size);
	else
		ret = query(store, S_MAIL_ALL, NULL, 0, row_mail, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_mail_get(struct bci_store *store, const char *message_id,
		       int (*fn)(const struct bci_store_mail *mail, void *ctx), void *ctx,
		       char *err, size_t err_size)
{
	struct bci_store_value param = value_text(message_id);
	struct mail_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_MAIL_GET, &param, 1, row_mail, &walk, err, err_size);

	return ret < 0 ? ret : walk.count > 0;
}

struct name_walk {
	int (*fn)(const char *build, void *ctx);
	void *ctx;
	int count;
};

static int row_name(const struct bci_store_value *c, int n, void *ctx)
{
	struct name_walk *walk = ctx;

	if (n < 1 || !column_text(&c[0]))
		return -EPROTO;
	walk->count++;
	return walk->fn ? walk->fn(column_text(&c[0]), walk->ctx) : 0;
}

int bci_store_mail_builds_final(struct bci_store *store, int (*fn)(const char *build, void *ctx),
				void *ctx, char *err, size_t err_size)
{
	struct name_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_MAIL_BUILDS_FINAL, NULL, 0, row_name, &walk, err, err_size);

	return ret ? ret : walk.count;
}

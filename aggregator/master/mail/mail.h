/* SPDX-License-Identifier: MIT */
/*
 * The master's mail: replies queued in the store's outbox and sent by SMTP
 * through libcurl, each once.
 *
 *   config.c      DATA/mail.conf: the server, the sender, TLS, AUTH, timings
 *   message.c     an mbox message (report/mbox.c's) as the bytes SMTP sends
 *                 (CRLF lines, no From_ line, mboxrd quoting undone) and its
 *                 envelope (sender, recipients, Message-ID) from its headers
 *   smtp.c        one delivery through libcurl (smtp://, smtps://, STARTTLS)
 *   reply.c       a build's reply (report/mbox.c's message) queued once; the
 *                 replies of the builds whose jobs have all ended
 *   note.c        a note of the master's own about a build, queued once
 *   deliver.c     one pass over the outbox: claim, send, mark sent / retry
 *                 with backoff / failed
 *   command.c     `bootci-aggregator mail queue|send|list`
 *   serve_hook.c  serve's sender thread
 *
 * Functions return 0 (or a count) or -errno with a message in @err.
 *
 * Sent once: a message is marked sent in the store right after the server
 * answered 250 to its DATA and before the connection is closed (QUIT comes
 * after). A crash in between (a few statements) leaves it queued, and the
 * next pass sends it again with the same Message-ID: the only way one
 * message goes out twice (bootci-aggregator-mail(1)).
 */
#ifndef BCI_MAIL_H
#define BCI_MAIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

struct bci_store;

#define BCI_MAIL_CONFIG_FILE "mail.conf"

/* ---- DATA/mail.conf (config.c; the keys are documented in bootci-mail.conf(5)) ---- */

struct bci_mail_config {
	char *url;			/* smtp://HOST[:PORT][/EHLO-NAME] or smtps://... */
	char *from;			/* the From: of replies: "Name <addr>" or addr */
	char *sender;			/* the envelope sender: @from's address */
	char *to;			/* the list replies go to (To:), or NULL */
	bool starttls;			/* smtp:// only: STARTTLS required */
	char *auth_file;		/* "user = ..." and "password = ..." lines, or NULL */
	char *ca_file;			/* the CA bundle for the server's certificate, or NULL */
	unsigned long timeout;		/* seconds one delivery may take */
	unsigned long interval;		/* seconds between serve's passes */
	unsigned long retry_first;	/* the first retry's delay; doubled each time */
	unsigned long retry_max;	/* the longest delay between two attempts */
	unsigned long retry_for;	/* how long a message is retried before it fails */
	bool reply_final;		/* serve queues a build's reply when its jobs have all ended */
	char *matrix_url;		/* the base URL of the pages the replies link, or NULL */
};

/*
 * Reads @data_dir/mail.conf into *@config (freed with bci_mail_config_free).
 * -ENOENT (with @err) when there is none: mail is off.
 */
int bci_mail_config_load(const char *data_dir, struct bci_mail_config *config, char *err,
			 size_t err_size);
/* The same from @path. */
int bci_mail_config_read(const char *path, struct bci_mail_config *config, char *err,
			 size_t err_size);
void bci_mail_config_free(struct bci_mail_config *config);

/* ---- the message (message.c) ---- */

/*
 * The message of the mbox @mbox (@len bytes, one message: an optional
 * "From " line, then headers and body; LF or CRLF lines) as SMTP sends it
 * into *@out (malloc'ed, NUL-terminated, *@out_len bytes): every line ends
 * in CRLF, the From_ line is gone, ">From " lines lose the '>' mboxrd added,
 * and the blank line that ends an mbox message is dropped. Dots are left
 * alone: libcurl doubles a leading dot as it sends. -EINVAL for a NUL byte,
 * a bare CR, or a message without headers or a blank line after them.
 */
int bci_mail_from_mbox(const char *mbox, size_t len, char **out, size_t *out_len, char *err,
		       size_t err_size);

/* What the message's own headers say of its envelope. */
struct bci_mail_envelope {
	char *message_id;		/* "<left@right>" */
	char *from;			/* the From: header's address */
	char *recipients;		/* To: and Cc: addresses, one a line */
};

/*
 * The envelope of @message (CRLF lines, as bci_mail_from_mbox() makes it):
 * folded headers unfolded, addresses taken from "Name <addr>" or bare addr
 * lists. -EINVAL when it has no Message-ID, no recipient, or an address
 * with a control character or blank in it.
 */
int bci_mail_envelope_read(const char *message, struct bci_mail_envelope *envelope, char *err,
			   size_t err_size);
void bci_mail_envelope_free(struct bci_mail_envelope *envelope);
/* The address of "Name <addr>" or "addr" in @out: -EINVAL if it is not one. */
int bci_mail_address(const char *text, char *out, size_t size);

/* ---- one delivery (smtp.c) ---- */

enum bci_smtp_outcome {
	BCI_SMTP_SENT,			/* 250 after DATA */
	BCI_SMTP_LATER,			/* 4xx, no answer, a cut connection, a timeout: try again */
	BCI_SMTP_REFUSED,		/* 5xx: refused for good */
};

/*
 * Sends @message (@len bytes, CRLF lines) from @sender to @recipients (one
 * address a line) through @config's server. @accepted (may be NULL) is
 * called the moment the server answered 250 to DATA, before the connection
 * is closed. @why gets the server's last answer or libcurl's error when it
 * was not sent. Returns the outcome (or -errno when nothing could be tried:
 * a bad auth file, no memory).
 */
int bci_smtp_send(const struct bci_mail_config *config, const char *sender,
		  const char *recipients, const char *message, size_t len,
		  void (*accepted)(void *ctx), void *ctx, const atomic_bool *stop, char *why,
		  size_t why_size);

/* ---- a build's reply (reply.c) ---- */

struct bci_mail_reply {
	const struct bci_mail_config *config;	/* From, the list, the matrix URL */
	const char *data_dir;		/* the runs' archives, DATA/known-issues.txt */
	const char *store_url;		/* for the report's second thread */
	int threads;			/* the report's threads (bci_report_options) */
	const char *build;
	const char *to;			/* more recipients after the list ("A <a@b>, c@d"), or NULL */
	const char *filters;		/* the filter file, or NULL: DATA/known-issues.txt if any */
	const char *matrix_url;		/* NULL: the configuration's */
	int window;			/* the baseline window in runs (0: 5) */
	time_t date;			/* the Date: and the Message-ID's time */
};

/*
 * Queues @r's build's reply (the message `report --mbox` writes, CRLF) from
 * the configured sender to its To: addresses. 0 when queued, with its
 * Message-ID in @message_id and its recipients (blank-separated) in
 * @recipients; 1 when the outbox already holds a message for the build
 * (nothing changed: @message_id is that one's, @recipients its state).
 */
int bci_mail_reply_queue(struct bci_store *store, const struct bci_mail_reply *r,
			 char *message_id, size_t id_size, char *recipients, size_t recipients_size,
			 char *err, size_t err_size);
/*
 * Queues the reply of every build whose report is final: it answers a
 * series (a Message-ID), the scheduler gave it jobs and they have all ended
 * (done or abandoned), and the outbox has no message for it. @defaults
 * gives all but the build and the date. A line on @log for each reply
 * queued or that could not be made; returns how many were queued.
 */
int bci_mail_replies_final(struct bci_store *store, const struct bci_mail_reply *defaults,
			   FILE *log, char *err, size_t err_size);

/* ---- a note of the master's own (note.c) ---- */

struct bci_mail_note {
	const char *key;		/* the outbox's build key: one message each */
	const char *in_reply_to;	/* the Message-ID it follows (In-Reply-To), or NULL */
	const char *to;			/* one more recipient after the list ("A <a@b>"), or NULL */
	const char *subject;		/* its text (encoded as RFC 2047 needs) */
	const char *body;		/* plain text, UTF-8 */
};

/*
 * With DATA/mail.conf, queues @n from the configured sender to the list and
 * @n->to: 0 when queued (its Message-ID in @message_id) or when there is no
 * mail.conf or nobody to send it to (@message_id ""); 1 when the outbox
 * holds that message already; -errno.
 */
int bci_mail_note_queue(struct bci_store *store, const char *data_dir,
			const struct bci_mail_note *n, char *message_id, size_t id_size,
			char *err, size_t err_size);

/* ---- the outbox (deliver.c) ---- */

struct bci_mail_pass {
	int sent, retried, failed;
};

/* The time now, Unix seconds with their fraction (as the store keeps its times). */
double bci_mail_now(void);

/*
 * One pass: every queued message due at @now, oldest first, claimed and
 * sent; a message the server took is marked sent at once; one refused for
 * now is retried after retry-first, doubled each attempt up to retry-max,
 * until retry-for after it was queued; one refused for good (5xx) fails.
 * Each outcome is one line on @log. Counts in @pass. @stop (may be NULL)
 * turning true ends the pass at once, the message in flight not sent.
 */
int bci_mail_deliver(struct bci_store *store, const struct bci_mail_config *config, double now,
		     FILE *log, const atomic_bool *stop, struct bci_mail_pass *pass, char *err,
		     size_t err_size);

/* ---- serve's sender (serve_hook.c) ---- */

struct bci_mail_server;

/*
 * Starts serve's sender thread: a pass every interval on a store connection
 * of its own (with reply = final, the final builds' replies queued first). When the data folder has no mail.conf mail is off: 0 and
 * *@out NULL. A mail.conf with an error is an error.
 */
int bci_mail_server_start(const char *data_dir, const char *store_url, FILE *log,
			  struct bci_mail_server **out, char *err, size_t err_size);
void bci_mail_server_stop(struct bci_mail_server *server);

#endif

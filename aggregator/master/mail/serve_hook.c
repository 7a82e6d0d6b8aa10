// SPDX-License-Identifier: MIT
/*
 * serve's sender (mail.h): a thread (ticker.h) that runs one delivery pass
 * every interval of DATA/mail.conf, on a store connection of its own, and is
 * woken to stop: a delivery in flight is abandoned then (the message stays
 * queued), so serve stops without waiting out an SMTP server's timeout. A
 * pass holds no lock of serve's: the network waits happen beside the
 * requests, never in their way.
 */
#include "mail.h"

#include "../store/store.h"
#include "message.h"
#include "ticker.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct bci_mail_server {
	struct bci_mail_config config;
	struct bci_store *store;
	char *data_dir, *store_url;
	FILE *log;
	bool curl_started;
	struct bci_ticker *ticker;
};

/* One pass: the final builds' replies queued (reply = final), then the outbox sent. */
static double send_pass(void *arg, const atomic_bool *stop)
{
	struct bci_mail_server *s = arg;
	struct bci_mail_pass pass;
	char err[1024];

	if (s->config.reply_final) {
		struct bci_mail_reply defaults = { .config = &s->config, .data_dir = s->data_dir,
						   .store_url = s->store_url, .threads = 1 };

		if (bci_mail_replies_final(s->store, &defaults, s->log, err, sizeof(err)) < 0 &&
		    s->log) {
			fprintf(s->log, "mail: the final builds: %s\n", err);
			fflush(s->log);
		}
	}
	if (bci_mail_deliver(s->store, &s->config, bci_mail_now(), s->log, stop, &pass, err,
			     sizeof(err)) < 0 && s->log) {
		fprintf(s->log, "mail: %s\n", err);
		fflush(s->log);
	}
	return (double)s->config.interval;
}

void bci_mail_server_stop(struct bci_mail_server *s)
{
	if (!s)
		return;
	bci_ticker_stop(s->ticker);
	bci_store_close(s->store);
	bci_mail_config_free(&s->config);
	free(s->data_dir);
	free(s->store_url);
	if (s->curl_started)
		curl_global_cleanup();
	free(s);
}

int bci_mail_server_start(const char *data_dir, const char *store_url, FILE *log,
			  struct bci_mail_server **out, char *err, size_t err_size)
{
	struct bci_mail_server *s;
	int ret;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->log = log;
	ret = bci_mail_config_load(data_dir, &s->config, err, err_size);
	if (ret == -ENOENT) {
		if (log)
			fprintf(log, "mail: no %s/%s: the sender is off\n", data_dir,
				BCI_MAIL_CONFIG_FILE);
		bci_mail_server_stop(s);
		return 0;
	}
	if (ret < 0)
		goto fail;
	s->data_dir = strdup(data_dir);
	s->store_url = store_url ? strdup(store_url) : NULL;
	if (!s->data_dir || (store_url && !s->store_url)) {
		ret = -ENOMEM;
		goto fail;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		bci_message(err, err_size, "mail: libcurl's initialisation failed");
		ret = -EIO;
		goto fail;
	}
	s->curl_started = true;
	if ((ret = bci_store_open(store_url, data_dir, &s->store, err, err_size)) < 0)
		goto fail;
	if ((ret = bci_ticker_start("mail sender", send_pass, s, &s->ticker, err, err_size)) < 0)
		goto fail;
	if (log) {
		fprintf(log, "mail: sending the outbox through %s every %lu s%s\n", s->config.url,
			s->config.interval,
			s->config.reply_final ? ", each build's reply queued once its jobs have ended" : "");
		fflush(log);
	}
	*out = s;
	return 0;
fail:
	bci_mail_server_stop(s);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * serve's sender (mail.h): a thread that runs one delivery pass every
 * interval of DATA/mail.conf, on a store connection of its own, and is
 * woken to stop: a delivery in flight is abandoned then (the message stays
 * queued), so serve stops without waiting out an SMTP server's timeout. A pass holds no lock of serve's: the network waits happen
 * beside the requests, never in their way.
 */
#include "mail.h"

#include "../store/store.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bci_mail_server {
	struct bci_mail_config config;
	struct bci_store *store;
	char *data_dir, *store_url;
	FILE *log;
	pthread_mutex_t lock;		/* stopping, for the wait between passes */
	pthread_cond_t wake;
	/* Read without the lock too: a delivery in flight is abandoned when it turns true. */
	atomic_bool stopping;
	bool thread_started;
	bool curl_started;
	pthread_t thread;
};

static void *loop_main(void *arg)
{
	struct bci_mail_server *s = arg;
	struct bci_mail_pass pass;
	struct timespec deadline;
	char err[1024];

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		pthread_mutex_unlock(&s->lock);
		if (s->config.reply_final) {
			struct bci_mail_reply defaults = { .config = &s->config,
							   .data_dir = s->data_dir,
							   .store_url = s->store_url, .threads = 1 };

			if (bci_mail_replies_final(s->store, &defaults, s->log, err,
						   sizeof(err)) < 0 && s->log) {
				fprintf(s->log, "mail: the final builds: %s\n", err);
				fflush(s->log);
			}
		}
		if (bci_mail_deliver(s->store, &s->config, bci_mail_now(), s->log, &s->stopping,
				     &pass, err, sizeof(err)) < 0 && s->log) {
			fprintf(s->log, "mail: %s\n", err);
			fflush(s->log);
		}
		pthread_mutex_lock(&s->lock);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += (time_t)s->config.interval;
		while (!s->stopping && pthread_cond_timedwait(&s->wake, &s->lock, &deadline) == 0)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void bci_mail_server_stop(struct bci_mail_server *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_broadcast(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	bci_store_close(s->store);
	bci_mail_config_free(&s->config);
	free(s->data_dir);
	free(s->store_url);
	if (s->curl_started)
		curl_global_cleanup();
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
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
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
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
	if ((ret = -pthread_create(&s->thread, NULL, loop_main, s)) < 0) {
		bci_message(err, err_size, "mail: cannot start the sender's thread: %s",
			    strerror(-ret));
		goto fail;
	}
	s->thread_started = true;
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

// SPDX-License-Identifier: MIT
/*
 * serve's thread for trees' bisections (bisect.h, "serve_hook.c"): a
 * ticker with its own store connection that moves each running tree
 * bisection on (tree.c), every few seconds; a candidate's build runs in
 * it, as long as a kernel's, without holding anything of serve's. Its
 * lines go to serve's log as "tree-bisect: bisect BUILD: ...". The series'
 * bisections are the Patchwork builder's (patchwork/serve_hook.c).
 */
#include "bisect.h"

#include "../store/store.h"
#include "message.h"
#include "ticker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The pause between rounds: a step's runs take minutes, a build longer. */
#define BISECT_ROUND_SECONDS 5.0

struct bci_bisect_server {
	struct bci_store *store;
	char *data_dir;
	FILE *log;
	struct bci_ticker *ticker;
};

static void say_line(void *ctx, const char *line)
{
	struct bci_bisect_server *s = ctx;
	char out[2200];

	if (!s->log)
		return;
	snprintf(out, sizeof(out), "tree-bisect: %s\n", line);
	fputs(out, s->log);
	fflush(s->log);
}

static double round_work(void *ctx, const atomic_bool *stop)
{
	struct bci_bisect_server *s = ctx;
	struct bci_bisector bz = { .store = s->store, .data_dir = s->data_dir, .say = say_line,
				   .say_ctx = s, .stop = stop };
	unsigned acted = 0;
	char err[2048];

	/* Each bisection's fault is said by the round; a store's is said here. */
	if (bci_tree_bisect_round(&bz, &acted, err, sizeof(err)) < 0 && !acted)
		say_line(s, err);
	return acted ? 0 : BISECT_ROUND_SECONDS;
}

void bci_bisect_server_stop(struct bci_bisect_server *s)
{
	if (!s)
		return;
	bci_ticker_stop(s->ticker);
	bci_store_close(s->store);
	free(s->data_dir);
	free(s);
}

int bci_bisect_server_start(const char *data_dir, const char *store_url, FILE *log,
			    struct bci_bisect_server **out, char *err, size_t err_size)
{
	struct bci_bisect_server *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s || !(s->data_dir = strdup(data_dir))) {
		free(s);
		return -ENOMEM;
	}
	s->log = log;
	if ((ret = bci_store_open(store_url, data_dir, &s->store, err, err_size)) < 0 ||
	    (ret = bci_ticker_start("tree bisector", round_work, s, &s->ticker, err,
				    err_size)) < 0) {
		bci_bisect_server_stop(s);
		return ret;
	}
	*out = s;
	return 0;
}

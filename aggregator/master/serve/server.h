/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server of `bootci-aggregator serve`: libmicrohttpd with a pool of
 * polling threads (a slow client costs a socket, never a thread), TLS through
 * GnuTLS when a certificate and key are given. Routing and header parsing are
 * in http.h, the upload's checks in validate.h, the data folder in spool.h;
 * daemon.c and the modules of internal.h tie them to the connections and call the store's ingest.
 *
 * One upload, in order: route, token (401 none or wrong, 403 another
 * machine's run), the run's state (200 stored with the same digest, 409 with
 * another), size limits (413), the machine's room in DATA/incoming (429:
 * try later, once its other uploads finish or expire), then the body streams into DATA/incoming;
 * once complete: sha256 against X-Bootci-Sha256 (400), the archive's checks
 * (422), kept durably (spool), ingested, answered 201.
 */
#ifndef BCI_SERVE_SERVER_H
#define BCI_SERVE_SERVER_H

#include "validate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bci_serve_config {
	const char *data_dir;
	const char *listen;		/* ADDR:PORT or [ADDR6]:PORT; port 0 picks a free one */
	const char *tokens;		/* token file (auth.h); required for uploads */
	const char *cert, *key;		/* PEM files: both for TLS, neither for plain HTTP */
	const char *store_url;		/* bci_store_open()'s URL; NULL: SQLite in data_dir */
	unsigned threads;		/* polling threads */
	unsigned workers;		/* threads checking, keeping and ingesting complete uploads */
	unsigned max_connections;
	unsigned max_per_ip;		/* connections from one address; 0: no limit */
	unsigned idle_timeout;		/* seconds a connection may stay silent */
	unsigned header_timeout;	/* seconds a new connection has to send its request's head */
	unsigned max_per_token;		/* connections one machine's token may hold; 0: no limit */
	unsigned request_timeout;	/* seconds one request may take in all */
	uint64_t max_body;		/* bytes of one archive */
	uint64_t max_incoming;		/* bytes of unfinished uploads one machine may hold */
	uint64_t incoming_max_age;	/* seconds a cut upload stays unwritten before it expires */
	struct bci_run_archive_limits limits;
	uint64_t console_boot_max;	/* bytes of one boot's console kept (console_log.h); 0: default */
	unsigned console_silent;	/* seconds without a byte that make a console silent; 0: default */
	FILE *log;			/* one line per request */
};

/* --workers' default: the CPUs this process may run on, plus one (at most 16). */
unsigned bci_serve_default_workers(void);
void bci_serve_config_default(struct bci_serve_config *config);

struct bci_server;

/*
 * Opens the data folder, the token file, the store; ingests what a previous
 * run accepted but did not ingest; then listens. Returns 0 or -errno (@err).
 */
int bci_server_start(const struct bci_serve_config *config, struct bci_server **out, char *err,
		     size_t err_size);
/* The port actually listened on (the one picked for port 0). */
unsigned bci_server_port(const struct bci_server *server);
/*
 * Stops accepting connections, lets the requests in flight finish (each is
 * bounded by the request timeout), then stops and frees the server.
 */
void bci_server_stop(struct bci_server *server);

#endif

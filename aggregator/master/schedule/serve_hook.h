/* SPDX-License-Identifier: MIT */
/*
 * The scheduler inside `bootci-aggregator serve`: its HTTP routes and its
 * loop. serve calls bci_schedule_http_owns() on a request's path first and
 * hands the scheduler's paths to bci_schedule_http_answer():
 *
 *   GET /api/v1/boot/<mac>                          iPXE script (schedule.h)
 *   GET /api/v1/machines/<machine>/jobs/<run-id>/initrd   the job initrd
 *   GET /api/v1/builds/<build>/files/<file>         a published file
 *   GET /api/v1/known-good/<version>/files/<file>   a known-good image's file
 *   GET /api/v1/schedule/machines                   each machine's state (JSON)
 *   PUT /api/v1/builds/<build>[/files/<file>]       publishing (below)
 *   PUT /api/v1/known-good/<version>[/files/<file>] publishing a known-good image
 *
 * No token: a machine's firmware has none, and nothing here is secret or
 * changes anything but the asking machine's own liveness and job state.
 *
 * The loop: a thread runs bci_schedule_tick() every BCI_SCHEDULE_TICK
 * seconds (the environment's BOOTCI_SCHEDULE_TICK overrides it), re-reading
 * DATA/machines.conf when it changed. The scheduler has its own store
 * connection, used under one lock by the loop and the routes.
 */
#ifndef BCI_SCHEDULE_SERVE_HOOK_H
#define BCI_SCHEDULE_SERVE_HOOK_H

#include "route.h"
#include "schedule.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BCI_SCHEDULE_TICK 30

struct bci_schedule_server;

/*
 * Starts the scheduler on @data_dir's inventory. When the data folder has no
 * machines.conf the scheduler is off: 0 and *@out NULL (its routes answer 404).
 */
int bci_schedule_server_start(const char *data_dir, const char *store_url, FILE *log,
			      struct bci_schedule_server **out, char *err, size_t err_size);
void bci_schedule_server_stop(struct bci_schedule_server *server);

struct bci_schedule_answer {
	int status;			/* HTTP status */
	const char *content_type;
	char *body;			/* malloc'ed, or NULL when @fd is the body */
	size_t len;
	int fd;				/* >= 0: answer with this file (the caller closes it) */
	uint64_t fd_size;
	/* With @fd, malloc'ed or NULL: sent before and after its fd_size bytes (a deploy initrd). */
	char *head, *tail;
	size_t head_len, tail_len;
	char note[512];			/* for serve's log line */
};

/*
 * Answers @method @url (decoded path); @host is the request's Host header
 * (the URLs in a script point back to it), @tls whether it came over TLS.
 * Always fills @answer (errors are answers too).
 */
void bci_schedule_http_answer(struct bci_schedule_server *server, const char *method,
			      const char *url, const char *host, bool tls,
			      struct bci_schedule_answer *answer);

/*
 * Publishing (publish_http.c): PUT /api/v1/builds/<build>/files/<file>
 * (X-Bootci-Sha256) for each file, then PUT /api/v1/builds/<build> with the
 * metadata {"tree", "commit", "tier", "base", "series_title", "message_id"};
 * a publisher's token (DATA/publishers) on each. A known-good image the same
 * way: PUT /api/v1/known-good/<version>/files/<file> for each file, then
 * PUT /api/v1/known-good/<version> with the metadata {} (the version is the
 * path's).
 *
 * begin: 0 to read the body into *@put, 1 when @answer is already the
 * answer, -errno. data: 0, or 1 with @answer the (error) answer. end: the
 * answer. free: always, at the request's end (a cut upload leaves nothing).
 */
struct bci_schedule_put;
int bci_schedule_put_begin(struct bci_schedule_server *server, const char *url,
			   const char *authorization, const char *sha256,
			   struct bci_schedule_put **put, struct bci_schedule_answer *answer);
int bci_schedule_put_data(struct bci_schedule_put *put, const char *data, size_t len,
			  struct bci_schedule_answer *answer);
void bci_schedule_put_end(struct bci_schedule_server *server, struct bci_schedule_put *put,
			  struct bci_schedule_answer *answer);
void bci_schedule_put_free(struct bci_schedule_put *put);

/*
 * A machine's fault note (serve's PUT /api/v1/machines/<machine>/fault, its
 * token checked by serve): bci_schedule_fault() under the scheduler's lock.
 */
int bci_schedule_server_fault(struct bci_schedule_server *server, const char *machine,
			      const char *note, char *err, size_t err_size);

/* A machine's hello (serve's PUT /api/v1/machines/<machine>/hello): bci_schedule_hello() under the lock. */
int bci_schedule_server_hello(struct bci_schedule_server *server, const char *machine,
			      struct bci_schedule_hello *hello, char *err, size_t err_size);

/*
 * @fn(@ctx, machine, action, how) is called after each power action the
 * scheduler takes on a machine (recovery's cycles, `return`), from its
 * thread: serve starts the machine's console's next boot there. NULL: none.
 */
void bci_schedule_server_on_power(struct bci_schedule_server *server,
				  void (*fn)(void *ctx, const char *machine, const char *action,
					     const char *how),
				  void *ctx);

/* For publish_http.c: the server's data folder, store, log, and its lock. */
const char *bci_schedule_server_data_dir(const struct bci_schedule_server *server);
struct bci_store *bci_schedule_server_store(struct bci_schedule_server *server);
FILE *bci_schedule_server_log(struct bci_schedule_server *server);
void bci_schedule_server_lock(struct bci_schedule_server *server, bool lock);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * What serve's modules share (not for use outside aggregator/master/serve/):
 *
 *   daemon.c    the daemon: routing, libmicrohttpd callbacks, the log, start and stop
 *   answer.c    answers (JSON, errors, a run's state) and the token check
 *   upload.c    the upload: per-run exclusion, the body, the workers that keep and ingest it
 *   reads.c     the GETs: a run's state, a test's log, the pages (pages.h)
 *   schedule_routes.c  the scheduler's routes (aggregator/schedule/serve_hook.h)
 *   fault.c     a machine's fault note (the scheduler takes it out) and hello
 *   console_routes.c  a machine's consoles, per boot (console.h reads them, console_log.h keeps them)
 *   archive_route.c   a stored run's archive, downloaded
 *   page_machine.c    a machine's and a run's page, with their consoles (page_machine.h)
 *   incoming.c  DATA/incoming's upkeep: cut uploads expire
 *   gate.c      connections wait there for their request's head, then get a slot by token
 */
#ifndef BCI_SERVE_INTERNAL_H
#define BCI_SERVE_INTERNAL_H

#include "server.h"
#include "http.h"
#include "spool.h"
#include "jsonw.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/socket.h>

/* A machine's fault note: one line, short enough to be a schedule note with its prefix. */
#define BCI_SERVE_FAULT_MAX 200

/* A run being uploaded: one request at a time per (machine, run). */
struct busy_run {
	struct busy_run *next;
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
};

struct bci_server {
	struct bci_serve_config config;
	int data_lock;			/* DATA/serve.lock's fd (data_lock.h) */
	struct bci_spool spool;
	struct bci_tokens *tokens;
	struct bci_ingest_call *ingest;
	struct bci_serve_pages *pages;	/* the read-only pages (pages.h) */
	struct bci_schedule_server *schedule;	/* the scheduler's routes and loop; NULL: off */
	struct bci_patchwork_server *patchwork;	/* the Patchwork poller; NULL: off */
	struct bci_bisect_server *bisect;	/* trees' bisections (bisect/bisect.h) */
	struct bci_consoles *consoles;	/* the console readers (console.h) */
	struct bci_mail_server *mail;	/* the mail sender (mail/mail.h); NULL: off */
	struct MHD_Daemon *daemon;
	struct serve_gate *gate;	/* gate.c; NULL over TLS */
	char *cert_pem, *key_pem;
	unsigned port;

	pthread_mutex_t lock;		/* busy, in_flight, the log, the job queue */
	pthread_cond_t idle;		/* in_flight reached 0 */
	struct busy_run *busy;
	unsigned in_flight;		/* requests between their headers and their end */

	/*
	 * Workers: a complete upload's checks, keeping and ingest run here, off
	 * the polling threads, its connection suspended meanwhile; so a large
	 * archive never stalls the other connections of a polling thread.
	 */
	pthread_t *workers;
	unsigned worker_count;
	pthread_cond_t job_ready;
	struct request *jobs, *jobs_tail;
	bool workers_stopping;
	unsigned working;		/* uploads a worker holds */
	int64_t last_body;		/* monotonic second an upload last got bytes (atomic) */

	/* The expiry of cut uploads (incoming.c): a thread that sweeps, woken to stop. */
	pthread_t expiry;
	bool expiry_running, expiry_stopping;
	pthread_cond_t expiry_wake;
};

struct request {
	struct bci_server *server;
	struct bci_route route;
	struct timespec began;
	char method[8];
	char url[160];			/* for the log, cut */
	int status;			/* answered, 0 until then */
	char note[1024];		/* why, for the log */
	bool answered;
	bool first;			/* in the call that has the headers only */
	bool in_worker;			/* answers are held for the resumed call */
	bool ended;			/* upload_end ran */
	struct MHD_Connection *connection;	/* while a worker has it */
	struct request *next_job;
	uint64_t announced;		/* a PUT's Content-Length, or UINT64_MAX */
	struct MHD_Response *pending;	/* answer held until the body is read */
	int refused;			/* refused mid-body: the status to answer at its end */
	uint64_t dropped;		/* body bytes dropped since */
	bool counted;			/* in in_flight */
	bool locked;			/* holds its run in busy */
	/* an upload */
	int fd;
	uint64_t start;			/* offset the body goes to */
	uint64_t expected;		/* body bytes announced, or UINT64_MAX */
	uint64_t total;			/* the archive's size when known, or UINT64_MAX */
	uint64_t written;		/* body bytes received */
	uint64_t room;			/* bytes the archive may reach: the machine's room in incoming/ */
	char sha256[BCI_SHA256_HEX_LEN + 1];
	struct bci_schedule_put *schedule_put;	/* a publish in progress (serve_hook.h) */
	/* a fault note (fault.c) */
	char fault[BCI_SERVE_FAULT_MAX + 1];
	size_t fault_len;
};

/*
 * An answer to an upload is sent once its body is read: libmicrohttpd would
 * otherwise close the connection under a client still sending, and the
 * client's TCP stack, reset, drops the answer unread. A body up to this many
 * bytes is read and dropped first; past it, the connection is closed (an
 * answer given before a larger body is still sent first, which a client that
 * waits for "100 Continue" reads).
 */
#define BODY_DROP_MAX (1ULL << 20)

/*
 * A JSON object answer built in memory: serve_json_begin() opens the object,
 * serve_json_respond() closes it, sends it with @status and frees it.
 */
struct json_answer {
	struct bci_jsonw w;
	FILE *f;
	char *body;
	size_t len;
};

/* Seconds since @since (CLOCK_MONOTONIC). */
double serve_elapsed(const struct timespec *since);

/* ---- answers (answer.c) ---- */

/* Sends (or holds until the body is read) @len bytes of @body with @status. */
enum MHD_Result serve_respond(struct MHD_Connection *connection, struct request *r, int status,
			      const char *body, size_t len, const char *content_type);
int serve_json_begin(struct json_answer *j);
enum MHD_Result serve_json_respond(struct MHD_Connection *connection, struct request *r,
				   int status, struct json_answer *j);
/* {"error": "<message>"}, the message also in the log line. */
enum MHD_Result serve_respond_error(struct MHD_Connection *connection, struct request *r,
				    int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A refusal found mid-body, answered at its end. */
enum MHD_Result serve_refuse_later(struct request *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
enum MHD_Result serve_respond_status(struct MHD_Connection *connection, struct request *r,
				     int http_status, const struct bci_run_status *status,
				     const char *ingest_error);
struct bci_schedule_run_job;
/* The same with the run's job as the scheduler sees it ("job": ...; @job NULL: none). */
enum MHD_Result serve_respond_run(struct MHD_Connection *connection, struct request *r,
				  int http_status, const struct bci_run_status *status,
				  const char *ingest_error, const struct bci_schedule_run_job *job);
/* 0 when the request's token is the URL's machine's; otherwise answers 401/403 and returns -1. */
int serve_authenticate(struct MHD_Connection *connection, struct request *r, bool *answered);

/* ---- the upload (upload.c) ---- */

/* Whether this request (or serve_busy_claim()'s caller) got the run: one at a time per run. */
bool serve_busy_claim(struct bci_server *s, const char *machine, const char *run_id);
void serve_busy_release(struct bci_server *s, const char *machine, const char *run_id);
bool serve_run_lock(struct bci_server *s, struct request *r);
void serve_run_unlock(struct bci_server *s, struct request *r);
enum MHD_Result serve_upload_begin(struct MHD_Connection *connection, struct request *r);
enum MHD_Result serve_upload_data(struct MHD_Connection *connection, struct request *r,
				  const char *data, size_t *data_size);
enum MHD_Result serve_upload_queue(struct MHD_Connection *connection, struct request *r);
void *serve_worker_main(void *arg);
/*
 * Under s->lock: no upload waits for or sits in a worker, and none received a
 * byte for @seconds: what is still in flight has clients gone silent.
 */
bool serve_uploads_silent(struct bci_server *s, unsigned seconds);
void serve_workers_stop(struct bci_server *s);

/* ---- DATA/incoming's upkeep (incoming.c) ---- */

/*
 * Removes the cut uploads older than --incoming-max-age now (each said in the
 * log), then starts the thread that does it again periodically.
 */
int serve_incoming_start(struct bci_server *s, char *err, size_t err_size);
void serve_incoming_stop(struct bci_server *s);

/* ---- the gate (gate.c) ---- */

/* Creates the gate and its listening socket on @addr (s->gate). */
int serve_gate_listen(struct bci_server *s, const struct sockaddr_storage *addr, char *err,
		      size_t err_size);
unsigned serve_gate_port(const struct bci_server *s);
/* Starts taking connections into s->daemon (started with MHD_USE_NO_LISTEN_SOCKET). */
int serve_gate_start(struct bci_server *s, char *err, size_t err_size);
/* Stops taking connections and closes those still waiting; the admitted stay. */
void serve_gate_stop(struct bci_server *s);
void serve_gate_free(struct bci_server *s);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION: an admitted connection's slot comes back. */
void serve_gate_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);

/* ---- the GETs (reads.c) ---- */

enum MHD_Result serve_get_run(struct MHD_Connection *connection, struct request *r);
enum MHD_Result serve_get_result(struct MHD_Connection *connection, struct request *r);
enum MHD_Result serve_get_manifest(struct MHD_Connection *connection, struct request *r);
enum MHD_Result serve_get_page(struct MHD_Connection *connection, struct request *r,
			       const char *url, const char *method);

/* ---- a machine's fault note (fault.c) ---- */

enum MHD_Result serve_fault_begin(struct MHD_Connection *connection, struct request *r);
/* The body, then (@data_size 0) the answer. */
enum MHD_Result serve_fault_step(struct MHD_Connection *connection, struct request *r,
				 const char *data, size_t *data_size);
/* PUT .../hello (body ignored): its known-good image started; answers the machine's state. */
enum MHD_Result serve_hello_step(struct MHD_Connection *connection, struct request *r,
				 const char *data, size_t *data_size);

/* ---- a machine's consoles (console_routes.c) ---- */

/* Whether @url is /machines/<machine>/consoles[/...]. */
bool serve_console_owns(const char *url);
enum MHD_Result serve_console_request(struct MHD_Connection *connection, struct request *r,
				      const char *url, const char *method);
/* A scheduler's route @url was answered 200: a job initrd served is noted in its console. */
void serve_console_served(struct bci_server *s, const char *url);

/* ---- a run's archive (archive_route.c) ---- */

/* Whether @url is /machines/<machine>/runs/<run-id>/archive. */
/* GET /series/PROJECT/SERIES/build.log: a series' build log (patchwork/log_route.c). */
bool serve_series_log_owns(const char *url);
enum MHD_Result serve_series_log_request(struct MHD_Connection *connection, struct request *r,
					 const char *url, const char *method);
bool serve_archive_owns(const char *url);
enum MHD_Result serve_archive_request(struct MHD_Connection *connection, struct request *r,
				      const char *url, const char *method);

/* ---- the scheduler's routes (schedule_routes.c) ---- */

enum MHD_Result serve_schedule_request(struct MHD_Connection *connection, struct request *r,
				       const char *url, const char *method);
enum MHD_Result serve_schedule_put_step(struct MHD_Connection *connection, struct request *r,
					const char *data, size_t *data_size);

#endif

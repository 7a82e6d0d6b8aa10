// SPDX-License-Identifier: MIT
/* serve's HTTP server (server.h): routing and libmicrohttpd callbacks; the pieces in internal.h. */
#include "internal.h"
#include "auth.h"
#include "console.h"
#include "data_lock.h"
#include "http.h"
#include "ingest_call.h"
#include "pages.h"
#include "spool.h"
#include "../mail/mail.h"
#include "../patchwork/patchwork.h"
#include "../bisect/bisect.h"
#include "../schedule/serve_hook.h"
#include "fsutil.h"
#include "jsonw.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/*
 * One worker per CPU this process may run on, plus one: a worker's ingest
 * waits for the disk part of its time (the archive's and the log file's
 * fsyncs, the store's commit), and the extra one keeps the CPUs busy
 * meanwhile. At most 16: past a few, workers only take turns on the store's
 * write lock.
 */
unsigned bci_serve_default_workers(void)
{
	cpu_set_t set;
	long cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;

	if (cpus < 1)
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	return cpus + 1 > 16 ? 16 : (unsigned)cpus + 1;
}

void bci_serve_config_default(struct bci_serve_config *config)
{
	memset(config, 0, sizeof(*config));
	config->listen = "127.0.0.1:8080";
	config->threads = 4;
	config->workers = bci_serve_default_workers();
	config->max_connections = 256;
	config->idle_timeout = 60;
	config->header_timeout = 10;
	config->max_per_token = 8;
	config->request_timeout = 3600;
	config->max_body = 4ULL << 30;
	config->max_incoming = 8ULL << 30;
	config->incoming_max_age = 3 * 86400;
	bci_run_archive_limits_default(&config->limits);
	config->log = stderr;
}



/*
 * Copies @s for the log with every byte outside printable ASCII (and spaces
 * unless @spaces) as %XX: a URL or an entry name cannot forge a log line.
 */
static void log_safe(char *out, size_t size, const char *s, bool spaces)
{
	size_t o = 0;

	for (; *s && o + 4 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c > 0x20 || (spaces && c == 0x20)) && c < 0x7f && c != '%')
			out[o++] = (char)c;
		else
			o += snprintf(out + o, size - o, "%%%02X", c);
	}
	out[o] = '\0';
}

/* ---- libmicrohttpd callbacks ---- */

/* The path and query values decoded without a NUL (http.h). */
static size_t on_unescape(void *cls, struct MHD_Connection *connection, char *s)
{
	(void)cls;
	(void)connection;
	return bci_http_unescape(s);
}

static enum MHD_Result first_call(struct MHD_Connection *connection, struct request *r,
				  const char *url, const char *method)
{
	struct bci_server *s = r->server;
	char why[300];
	int status;

	if (bci_schedule_http_owns(url))
		return serve_schedule_request(connection, r, url, method);
	if (serve_console_owns(url))
		return serve_console_request(connection, r, url, method);
	if (serve_archive_owns(url))
		return serve_archive_request(connection, r, url, method);
	if (serve_series_log_owns(url))
		return serve_series_log_request(connection, r, url, method);
	if (bci_serve_pages_owns(url))
		return serve_get_page(connection, r, url, method);
	status = bci_http_route(method, url, &r->route, why, sizeof(why));
	if (status)
		return serve_respond_error(connection, r, status, "%s", why);
	switch (r->route.kind) {
	case BCI_ROUTE_HEALTH:
		snprintf(r->note, sizeof(r->note), "health");
		return serve_respond(connection, r, MHD_HTTP_OK, "{\"status\": \"ok\"}\n", 17,
			       "application/json");
	case BCI_ROUTE_RESULT:
		return serve_get_result(connection, r);
	case BCI_ROUTE_MANIFEST:
		return serve_get_manifest(connection, r);
	case BCI_ROUTE_FAULT:
	case BCI_ROUTE_HELLO:
		return serve_fault_begin(connection, r);
	case BCI_ROUTE_RUN:
		if (!r->route.put)
			return serve_get_run(connection, r);
		pthread_mutex_lock(&s->lock);
		s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		r->counted = true;
		return serve_upload_begin(connection, r);
	}
	return MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **context)
{
	struct request *r = *context;
	enum MHD_Result ret;

	(void)version;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->server = cls;
		r->fd = -1;
		r->expected = UINT64_MAX;
		r->total = UINT64_MAX;
		clock_gettime(CLOCK_MONOTONIC, &r->began);
		snprintf(r->method, sizeof(r->method), "%s", method);
		log_safe(r->url, sizeof(r->url), url, false);
		*context = r;
		r->announced = UINT64_MAX;
		if (!strcmp(method, "PUT")) {
			const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
									 MHD_HTTP_HEADER_CONTENT_LENGTH);

			if (length && bci_http_length(length, &r->announced) < 0)
				r->announced = UINT64_MAX;
		}
		r->first = true;
		ret = first_call(connection, r, url, method);
		r->first = false;
		return ret;
	}
	if (r->pending) {
		if (*data_size) {
			r->dropped += *data_size;
			*data_size = 0;
			return r->dropped > BODY_DROP_MAX ? MHD_NO : MHD_YES;
		}
		ret = MHD_queue_response(connection, (unsigned)r->status, r->pending);
		MHD_destroy_response(r->pending);
		r->pending = NULL;
		r->answered = true;
		return ret;
	}
	if (r->ended && !r->answered)
		return MHD_NO;		/* a worker could not even make an answer */
	if (r->answered) {
		/* Answered before the body was read: the rest is dropped with the connection. */
		*data_size = 0;
		return MHD_YES;
	}
	if (r->schedule_put)
		return serve_schedule_put_step(connection, r, data, data_size);
	if (r->refused) {
		if (!*data_size) {
			char note[sizeof(r->note)];

			memcpy(note, r->note, sizeof(note));
			return serve_respond_error(connection, r, r->refused, "%s", note);
		}
		r->dropped += *data_size;
		*data_size = 0;
		if (r->dropped > BODY_DROP_MAX ||
		    serve_elapsed(&r->began) > r->server->config.request_timeout)
			return MHD_NO;
		return MHD_YES;
	}
	if (r->route.kind == BCI_ROUTE_FAULT)
		return serve_fault_step(connection, r, data, data_size);
	if (r->route.kind == BCI_ROUTE_HELLO)
		return serve_hello_step(connection, r, data, data_size);
	if (*data_size)
		return serve_upload_data(connection, r, data, data_size);
	if (r->route.kind == BCI_ROUTE_RUN && r->route.put && !r->ended)
		return serve_upload_queue(connection, r);
	return MHD_NO;
}

static void log_request(struct bci_server *s, struct MHD_Connection *connection,
			const struct request *r, enum MHD_RequestTerminationCode how)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char address[INET6_ADDRSTRLEN] = "?", status[8], note[sizeof(r->note) * 3];
	static const char *const endings[] = {
		[MHD_REQUEST_TERMINATED_COMPLETED_OK] = "",
		[MHD_REQUEST_TERMINATED_WITH_ERROR] = " (connection error)",
		[MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = " (idle timeout: connection closed)",
		[MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = " (server stopping)",
		[MHD_REQUEST_TERMINATED_READ_ERROR] = " (client went away)",
		[MHD_REQUEST_TERMINATED_CLIENT_ABORT] = " (client aborted)",
	};

	if (info && info->client_addr) {
		const struct sockaddr *sa = info->client_addr;

		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, address,
				  sizeof(address));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, address,
				  sizeof(address));
	}
	if (r->status)
		snprintf(status, sizeof(status), "%d", r->status);
	else
		snprintf(status, sizeof(status), "-");
	log_safe(note, sizeof(note), r->note, true);
	pthread_mutex_lock(&s->lock);
	fprintf(s->config.log, "serve: %s %s %s %s in=%llu %.3fs %s%s\n", address, r->method, r->url,
		status, (unsigned long long)r->written, serve_elapsed(&r->began), note,
		(unsigned)how < sizeof(endings) / sizeof(endings[0]) ? endings[how] : "");
	fflush(s->config.log);
	pthread_mutex_unlock(&s->lock);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **context,
			 enum MHD_RequestTerminationCode how)
{
	struct bci_server *s = cls;
	struct request *r = *context;

	if (!r)
		return;
	if (r->fd >= 0) {
		/* Cut short: what arrived stays for a resume, and durably so, since GET reports it. */
		fdatasync(r->fd);
		close(r->fd);
		if (!r->note[0])
			snprintf(r->note, sizeof(r->note), "cut after %llu bytes, kept for a resume",
				 (unsigned long long)(r->start + r->written));
	}
	bci_schedule_put_free(r->schedule_put);
	log_request(s, connection, r, how);
	if (r->pending)
		MHD_destroy_response(r->pending);
	if (r->locked)
		serve_run_unlock(s, r);
	if (r->counted) {
		pthread_mutex_lock(&s->lock);
		if (--s->in_flight == 0)
			pthread_cond_broadcast(&s->idle);
		pthread_mutex_unlock(&s->lock);
	}
	free(r);
	*context = NULL;
}

/* ---- start and stop ---- */

static int parse_listen(const char *listen, struct sockaddr_storage *addr, bool *ipv6, char *err,
			size_t err_size)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h = listen;
	uint64_t port;
	size_t len;

	memset(addr, 0, sizeof(*addr));
	if (*h == '[') {
		colon = strstr(h, "]:");
		h++;
		len = colon ? (size_t)(colon - h) : 0;
		colon = colon ? colon + 1 : NULL;
	} else {
		colon = strrchr(h, ':');
		len = colon ? (size_t)(colon - h) : 0;
	}
	if (!colon || len == 0 || len >= sizeof(host) || bci_http_length(colon + 1, &port) < 0 ||
	    port > 65535) {
		bci_message(err, err_size, "--listen '%s': expected ADDR:PORT or [ADDR6]:PORT", listen);
		return -EINVAL;
	}
	memcpy(host, h, len);
	host[len] = '\0';
	*ipv6 = false;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)addr)->sin_addr) == 1) {
		((struct sockaddr_in *)addr)->sin_family = AF_INET;
		((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)addr)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)addr)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
		*ipv6 = true;
		return 0;
	}
	bci_message(err, err_size, "--listen '%s': '%s' is not an IP address", listen, host);
	return -EINVAL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct bci_server *s = cls;

	pthread_mutex_lock(&s->lock);
	fprintf(s->config.log, "serve: libmicrohttpd: ");
	vfprintf(s->config.log, fmt, ap);
	fflush(s->config.log);
	pthread_mutex_unlock(&s->lock);
}

static void server_free(struct bci_server *s)
{
	serve_gate_stop(s);
	serve_workers_stop(s);
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	/* After libmicrohttpd's threads: their notices of closed connections reach the gate. */
	serve_gate_free(s);
	serve_incoming_stop(s);
	free(s->workers);
	/* No power note may reach the consoles once they stop (the hook is set under the lock). */
	bci_schedule_server_on_power(s->schedule, NULL, NULL);
	bci_consoles_stop(s->consoles);
	bci_mail_server_stop(s->mail);
	bci_patchwork_server_stop(s->patchwork);
	bci_bisect_server_stop(s->bisect);
	bci_schedule_server_stop(s->schedule);
	bci_serve_pages_free(s->pages);
	bci_ingest_call_free(s->ingest);
	bci_tokens_free(s->tokens);
	free(s->cert_pem);
	if (s->key_pem)
		explicit_bzero(s->key_pem, strlen(s->key_pem));
	free(s->key_pem);
	while (s->busy) {
		struct busy_run *b = s->busy;

		s->busy = b->next;
		free(b);
	}
	pthread_cond_destroy(&s->job_ready);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	bci_serve_data_unlock(s->data_lock);
	free(s);
}

/* Ingests what an earlier serve accepted and did not get to ingest. */
static int recover_one(void *ctx, const char *machine, const char *run_id,
		       const struct bci_run_status *status)
{
	struct bci_server *s = ctx;
	char why[600];

	if (bci_ingest_call_run(s->ingest, &s->spool, machine, run_id, status->sha256, why,
				sizeof(why)) < 0)
		fprintf(s->config.log, "serve: %s/%s: still not ingested: %s\n", machine, run_id, why);
	else
		fprintf(s->config.log, "serve: %s/%s: ingested (accepted before a restart)\n", machine,
			run_id);
	return 0;
}

/* The scheduler's power hook (serve_hook.h) into the machine's console (console.h). */
static void console_power_done(void *ctx, const char *machine, const char *action, const char *how)
{
	bci_consoles_power_done(ctx, machine, action, how);
}

int bci_server_start(const struct bci_serve_config *config, struct bci_server **out, char *err,
		     size_t err_size)
{
	struct bci_server *s = calloc(1, sizeof(*s));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem options[16];
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage addr;
	size_t n = 0, len;
	bool ipv6;
	int ret;

	if (!s)
		return -ENOMEM;
	s->config = *config;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	pthread_cond_init(&s->job_ready, NULL);
	/* Before anything touches the data folder: the spool's sweep would remove another's files. */
	s->data_lock = ret = bci_serve_data_lock(config->data_dir, err, err_size);
	if (ret < 0 ||
	    (ret = parse_listen(config->listen, &addr, &ipv6, err, err_size)) < 0 ||
	    (ret = bci_spool_open(&s->spool, config->data_dir, err, err_size)) < 0 ||
	    (config->tokens && (ret = bci_tokens_load(config->tokens, &s->tokens, err, err_size)) < 0) ||
	    (ret = bci_ingest_call_open(config->store_url, config->data_dir, config->workers,
					&s->ingest, err, err_size)) < 0)
		goto fail;
	if ((ret = bci_serve_pages_new(s->ingest, &s->pages)) < 0) {
		snprintf(err, err_size, "pages: %s", strerror(-ret));
		goto fail;
	}
	if ((ret = bci_schedule_server_start(config->data_dir, config->store_url, config->log,
					     &s->schedule, err, err_size)) < 0 ||
	    (ret = bci_consoles_start(config->data_dir, config->console_boot_max,
				      config->console_silent, config->log,
				      &s->lock, &s->consoles, err, err_size)) < 0 ||
	    (ret = bci_mail_server_start(config->data_dir, config->store_url, config->log,
					 &s->mail, err, err_size)) < 0 ||
	    (ret = bci_patchwork_server_start(config->data_dir, config->store_url, config->log,
					      &s->patchwork, err, err_size)) < 0 ||
	    (ret = bci_bisect_server_start(config->data_dir, config->store_url, config->log,
					   &s->bisect, err, err_size)) < 0)
		goto fail;
	/* The master's own power actions start a boot in the machine's console. */
	bci_schedule_server_on_power(s->schedule, console_power_done, s->consoles);
	if (!config->cert != !config->key) {
		bci_message(err, err_size, "--cert and --key go together");
		ret = -EINVAL;
		goto fail;
	}
	/* The logger first, so that what the later options say goes through it. */
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s };
	if (config->cert) {
		if ((ret = bci_read_file(config->cert, &s->cert_pem, &len, 1 << 20)) < 0) {
			bci_message(err, err_size, "%s: %s", config->cert, strerror(-ret));
			goto fail;
		}
		if ((ret = bci_read_file(config->key, &s->key_pem, &len, 1 << 20)) < 0) {
			bci_message(err, err_size, "%s: %s", config->key, strerror(-ret));
			goto fail;
		}
		flags |= MHD_USE_TLS;
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert_pem };
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->key_pem };
	}
	if (ipv6)
		flags |= MHD_USE_IPv6;
	bci_spool_each_pending(&s->spool, recover_one, s, err, err_size);
	if ((ret = serve_incoming_start(s, err, err_size)) < 0)
		goto fail;
	s->workers = calloc(config->workers ? config->workers : 1, sizeof(*s->workers));
	if (!s->workers) {
		ret = -ENOMEM;
		goto fail;
	}
	for (; s->worker_count < config->workers; s->worker_count++)
		if ((ret = -pthread_create(&s->workers[s->worker_count], NULL, serve_worker_main, s)) < 0) {
			bci_message(err, err_size, "cannot start a worker: %s", strerror(-ret));
			goto fail;
		}

	/* Plain HTTP: the gate (gate.c) listens, and hands over connections whose head is read. */
	if (!config->cert) {
		if ((ret = serve_gate_listen(s, &addr, err, err_size)) < 0)
			goto fail;
		flags |= MHD_USE_NO_LISTEN_SOCKET;
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
							(intptr_t)serve_gate_notify, s };
	} else {
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &addr };
	}
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->threads, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, config->max_connections, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, config->idle_timeout, NULL };
	if (config->max_per_ip)
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
							config->max_per_ip, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, 128 * 1024, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)on_unescape, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, options,
				     MHD_OPTION_END);
	if (!s->daemon) {
		bci_message(err, err_size, "cannot listen on %s (in use, or a bad certificate or key?)",
			    config->listen);
		ret = -EADDRNOTAVAIL;
		goto fail;
	}
	if (s->gate) {
		if ((ret = serve_gate_start(s, err, err_size)) < 0)
			goto fail;
		s->port = serve_gate_port(s);
	} else {
		info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
		s->port = info ? info->port : 0;
	}
	*out = s;
	return 0;
fail:
	server_free(s);
	return ret;
}

unsigned bci_server_port(const struct bci_server *server)
{
	return server->port;
}

/* Seconds without a byte from any upload after which a stop stops waiting for them. */
#define STOP_SILENCE 5

void bci_server_stop(struct bci_server *s)
{
	struct timespec deadline;
	MHD_socket listener;

	if (s->gate) {
		serve_gate_stop(s);
	} else {
		listener = MHD_quiesce_daemon(s->daemon);
		if (listener != MHD_INVALID_SOCKET)
			close(listener);
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += s->config.request_timeout + 1;
	pthread_mutex_lock(&s->lock);
	if (s->in_flight)
		fprintf(s->config.log, "serve: stopping: %u upload(s) in flight, finishing them\n",
			s->in_flight);
	/*
	 * Uploads still sending are waited for; one whose client went silent (a
	 * machine powered off without closing its connection) would hold the
	 * stop until the idle timeout: cut, it keeps its bytes for a resume.
	 */
	while (s->in_flight && !serve_uploads_silent(s, STOP_SILENCE)) {
		struct timespec tick;

		clock_gettime(CLOCK_REALTIME, &tick);
		tick.tv_sec++;
		if (tick.tv_sec > deadline.tv_sec)
			tick = deadline;
		if (pthread_cond_timedwait(&s->idle, &s->lock, &tick) == ETIMEDOUT &&
		    tick.tv_sec == deadline.tv_sec)
			break;
	}
	if (s->in_flight)
		fprintf(s->config.log, "serve: stopping: %u upload(s) cut, kept for a resume (%s)\n",
			s->in_flight, serve_uploads_silent(s, STOP_SILENCE) ?
			"their clients went silent" : "past --request-timeout");
	pthread_mutex_unlock(&s->lock);
	server_free(s);
}


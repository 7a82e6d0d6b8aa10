// SPDX-License-Identifier: MIT
/* The scheduler's routes and loop inside serve (serve_hook.h). */
#include "serve_hook.h"

#include "deploy.h"

#include "internal.h"
#include "judge.h"

#include "../store/store.h"
#include "../serve/console_state.h"
#include "config.h"
#include "fsutil.h"
#include "jsonw.h"
#include "manifest.h"
#include "message.h"
#include "ticker.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct bci_schedule_server {
	struct bci_schedule schedule;
	struct bci_inventory *inventory;
	struct bci_store *store;
	char *data_dir;
	char inventory_path[PATH_MAX];
	struct timespec inventory_mtime;
	FILE *log;
	unsigned tick;
	pthread_mutex_t lock;		/* the store, the inventory */
	struct bci_ticker *ticker;
};

static double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Re-reads the inventory when the file changed; a bad file keeps the old one (and says why). */
static void inventory_refresh(struct bci_schedule_server *s)
{
	struct bci_inventory *fresh;
	char err[512];
	struct stat st;

	if (stat(s->inventory_path, &st) < 0 ||
	    (st.st_mtim.tv_sec == s->inventory_mtime.tv_sec &&
	     st.st_mtim.tv_nsec == s->inventory_mtime.tv_nsec))
		return;
	if (bci_inventory_load(s->inventory_path, &fresh, err, sizeof(err)) < 0) {
		bci_schedule_say(&s->schedule, "%s (keeping the inventory read before)", err);
		s->inventory_mtime = st.st_mtim;
		return;
	}
	s->schedule.inventory = fresh;
	if (bci_schedule_tags_sync(&s->schedule, s->inventory, err, sizeof(err)) < 0)
		bci_schedule_say(&s->schedule, "inventory: tags: %s", err);
	bci_inventory_free(s->inventory);
	s->inventory = fresh;
	s->inventory_mtime = st.st_mtim;
	bci_schedule_say(&s->schedule, "inventory: %zu machine(s) from %s", fresh->machine_count,
			 s->inventory_path);
}

/* One tick of the scheduler (ticker.h), the lock held: the routes use the same store. */
static double tick_round(void *arg, const atomic_bool *stop)
{
	struct bci_schedule_server *s = arg;
	char err[1024];

	(void)stop;
	pthread_mutex_lock(&s->lock);
	inventory_refresh(s);
	if (bci_schedule_tick(&s->schedule, now_unix(), err, sizeof(err)) < 0)
		bci_schedule_say(&s->schedule, "tick: %s", err);
	pthread_mutex_unlock(&s->lock);
	return (double)s->tick;
}

void bci_schedule_server_stop(struct bci_schedule_server *s)
{
	if (!s)
		return;
	bci_ticker_stop(s->ticker);
	bci_store_close(s->store);
	bci_inventory_free(s->inventory);
	pthread_mutex_destroy(&s->lock);
	free(s->data_dir);
	free(s);
}

int bci_schedule_server_start(const char *data_dir, const char *store_url, FILE *log,
			      struct bci_schedule_server **out, char *err, size_t err_size)
{
	struct bci_schedule_server *s;
	const char *tick = getenv("BOOTCI_SCHEDULE_TICK");
	unsigned long seconds = BCI_SCHEDULE_TICK;
	struct stat st;
	int ret;

	*out = NULL;
	if (tick && *tick && (bci_parse_seconds(tick, &seconds) < 0 || seconds > 3600)) {
		bci_message(err, err_size, "BOOTCI_SCHEDULE_TICK=%s: a duration up to 1h", tick);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->log = log;
	s->tick = (unsigned)seconds;
	snprintf(s->inventory_path, sizeof(s->inventory_path), "%s/%s", data_dir, BCI_INVENTORY_FILE);
	if (stat(s->inventory_path, &st) < 0) {
		bci_schedule_server_stop(s);
		if (log)
			fprintf(log, "schedule: no %s/%s: the scheduler is off\n", data_dir,
				BCI_INVENTORY_FILE);
		return 0;
	}
	if (!(s->data_dir = strdup(data_dir))) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = bci_inventory_load(s->inventory_path, &s->inventory, err, err_size)) < 0 ||
	    (ret = bci_store_open(store_url, data_dir, &s->store, err, err_size)) < 0)
		goto fail;
	s->inventory_mtime = st.st_mtim;
	s->schedule = (struct bci_schedule){ .store = s->store, .inventory = s->inventory,
					     .data_dir = s->data_dir, .log = log,
					     .judge = bci_schedule_judge_report,
					     .judge_ctx = s->data_dir };
	/* The first read's tags, before any request: the report sees them from the start. */
	if ((ret = bci_schedule_tags_sync(&s->schedule, NULL, err, err_size)) < 0)
		goto fail;
	if ((ret = bci_ticker_start("scheduler", tick_round, s, &s->ticker, err, err_size)) < 0)
		goto fail;
	bci_schedule_say(&s->schedule, "%zu machine(s) from %s, a turn every %u s",
			 s->inventory->machine_count, s->inventory_path, s->tick);
	*out = s;
	return 0;
fail:
	bci_schedule_server_stop(s);
	return ret;
}

/* ---- routes ---- */

static void answer_text(struct bci_schedule_answer *a, int status, const char *type, char *body)
{
	a->status = status;
	a->content_type = type;
	a->body = body;
	a->len = body ? strlen(body) : 0;
}

static void answer_error(struct bci_schedule_answer *a, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void answer_error(struct bci_schedule_answer *a, int status, const char *fmt, ...)
{
	char message[400], *body = NULL;
	FILE *f;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	snprintf(a->note, sizeof(a->note), "%s", message);
	f = open_memstream(&body, &a->len);
	if (f) {
		struct bci_jsonw w;

		bci_jsonw_init(&w, f, 0);
		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "error");
		bci_jsonw_string(&w, message);
		bci_jsonw_object_end(&w);
		bci_jsonw_finish(&w);
		fputc('\n', f);
		fclose(f);
	}
	a->status = status;
	a->content_type = "application/json";
	a->body = body;
	a->len = body ? strlen(body) : 0;
}

static void boot_answer(struct bci_schedule_server *s, const char *mac, const char *host, bool tls,
			struct bci_schedule_answer *a)
{
	char base[300], err[512], *script = NULL;
	int ret;

	if (!host || !*host || strlen(host) > 255) {
		answer_error(a, 400, "a boot request needs a Host header");
		return;
	}
	snprintf(base, sizeof(base), "%s://%s", tls ? "https" : "http", host);
	/*
	 * One transaction, its commit not waiting for the disk (store.h): the netboots of a lab
	 * take turns on the scheduler's lock, and a commit each that waited behind the ingests'
	 * flushes made them queue. What a crash could lose is rewritten by the next netboot.
	 */
	ret = bci_store_begin_relaxed(s->store, err, sizeof(err));
	if (ret == 0) {
		ret = bci_schedule_boot(&s->schedule, mac, base, now_unix(), &script, err, sizeof(err));
		if (ret < 0)
			bci_store_rollback(s->store);
		else
			ret = bci_store_commit(s->store, err, sizeof(err));
		if (ret < 0) {
			free(script);
			script = NULL;
		}
	}
	if (ret == -EINVAL) {
		answer_error(a, 400, "%s", err);
		return;
	}
	if (ret < 0) {
		answer_error(a, 500, "%s", err);
		return;
	}
	snprintf(a->note, sizeof(a->note), "boot %s: %s", mac,
		 strstr(script, "\nexit\n") ? "exit" : "job");
	answer_text(a, 200, "text/plain; charset=utf-8", script);
}

static void file_answer(struct bci_schedule_server *s, const struct bci_schedule_route *route,
			struct bci_schedule_answer *a)
{
	const char *build = route->first, *name = route->second;
	bool known_good = route->kind == BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE;
	struct bci_schedule_file find;
	char err[512], path[PATH_MAX];
	struct stat st;
	int ret = bci_schedule_file_find(s->store, known_good, build, name, &find, err, sizeof(err));

	if (ret < 0) {
		answer_error(a, 500, "%s", err);
		return;
	}
	if (!ret) {
		answer_error(a, 404, "%s %s has no file %s", known_good ? "known-good image" : "build",
			     build, name);
		return;
	}
	bci_schedule_object_path(s->data_dir, find.sha256, path, sizeof(path));
	a->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (a->fd < 0 || fstat(a->fd, &st) < 0 || (uint64_t)st.st_size != find.size) {
		if (a->fd >= 0)
			close(a->fd);
		a->fd = -1;
		answer_error(a, 500, "build %s: %s: its object %s is missing or damaged", build, name,
			     find.sha256);
		return;
	}
	a->status = 200;
	a->content_type = "application/octet-stream";
	a->fd_size = (uint64_t)st.st_size;
	snprintf(a->note, sizeof(a->note), "%s/%s, %llu bytes", build, name,
		 (unsigned long long)a->fd_size);
}

static void initrd_answer(struct bci_schedule_server *s, const struct bci_schedule_route *route,
			  struct bci_schedule_answer *a)
{
	const char *machine = route->first, *run_id = route->second;
	char err[512];
	int ret;

	if (route->kind == BCI_SCHEDULE_ROUTE_DEPLOY_INITRD) {
		struct bci_deploy_initrd initrd;

		ret = bci_schedule_deploy_initrd(&s->schedule, machine, run_id, &initrd, err,
						 sizeof(err));
		if (ret < 0) {
			answer_error(a, ret == -ENOENT ? 404 : 500, "%s", err);
			return;
		}
		/* The image streams from its object; only the framing is in memory. */
		a->status = 200;
		a->content_type = "application/octet-stream";
		a->fd = initrd.fd;
		a->fd_size = initrd.image_size;
		a->head = initrd.head;
		a->head_len = initrd.head_len;
		a->tail = initrd.tail;
		a->tail_len = initrd.tail_len;
		snprintf(a->note, sizeof(a->note), "deploy initrd %s/%s, %llu bytes", machine, run_id,
			 (unsigned long long)(a->head_len + a->fd_size + a->tail_len));
		return;
	}
	ret = bci_schedule_job_initrd(&s->schedule, machine, run_id, &a->body, &a->len,
					      err, sizeof(err));
	if (ret < 0) {
		answer_error(a, ret == -ENOENT ? 404 : 500, "%s", err);
		return;
	}
	a->status = 200;
	a->content_type = "application/octet-stream";
	snprintf(a->note, sizeof(a->note), "job initrd %s/%s, %zu bytes", machine, run_id, a->len);
}

/* "disk": "ok", "damaged" or "deploying", and "disk_note": why, or the version being written. */
static void disk_json(struct bci_schedule *schedule, struct bci_jsonw *w, const char *machine)
{
	char note[512], err[256];
	int disk = bci_schedule_deploy_state(schedule, machine, note, sizeof(note), err,
					     sizeof(err));

	bci_jsonw_key(w, "disk");
	bci_jsonw_string(w, disk == BCI_DEPLOY_DAMAGED	  ? "damaged"
			    : disk == BCI_DEPLOY_DEPLOYING ? "deploying"
			    : disk == BCI_DEPLOY_NONE	  ? "ok"
							  : "unknown");
	bci_jsonw_key(w, "disk_note");
	if (disk > BCI_DEPLOY_NONE)
		bci_jsonw_string(w, note);
	else
		bci_jsonw_null(w);
}

/* The machine's console reader's state (serve/console_state.h), null when it has none. */
static void console_json(struct bci_schedule *schedule, struct bci_jsonw *w,
			 const struct bci_inventory_machine *m)
{
	struct bci_console_state state;
	char err[PATH_MAX + 200];

	bci_jsonw_key(w, "console");
	if (m->console.kind != BCI_CONSOLE_NONE &&
	    bci_console_state_of(schedule->data_dir, m->name, &state, err, sizeof(err)) > 0)
		bci_console_state_json(w, &state, time(NULL));
	else
		bci_jsonw_null(w);
}

static void states_answer(struct bci_schedule_server *s, struct bci_schedule_answer *a)
{
	char *body = NULL, err[512];
	struct bci_jsonw w;
	FILE *f = open_memstream(&body, &a->len);

	if (!f) {
		answer_error(a, 500, "out of memory");
		return;
	}
	bci_jsonw_init(&w, f, 2);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "machines");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < s->inventory->machine_count; i++) {
		const struct bci_inventory_machine *m = &s->inventory->machines[i];
		struct bci_schedule_state state = { .state = "unknown" };
		int known = bci_schedule_state_read(&s->schedule, m->name, &state, err, sizeof(err));

		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "name");
		bci_jsonw_string(&w, m->name);
		bci_jsonw_key(&w, "mac");
		bci_jsonw_string(&w, m->mac);
		bci_jsonw_key(&w, "state");
		bci_jsonw_string(&w, known > 0 ? state.state : "unknown");
		bci_jsonw_key(&w, "power_cycles");
		bci_jsonw_int(&w, known > 0 ? state.power_cycles : 0);
		bci_jsonw_key(&w, "last_seen");
		if (known > 0)
			bci_jsonw_double(&w, state.last_seen);
		else
			bci_jsonw_null(&w);
		/* Asking for a job forgives the cycles; when it was last cycled stays. */
		bci_jsonw_key(&w, "last_cycle");
		if (known > 0 && state.last_cycle > 0)
			bci_jsonw_double(&w, state.last_cycle);
		else
			bci_jsonw_null(&w);
		bci_jsonw_key(&w, "note");
		if (known > 0 && state.note[0])
			bci_jsonw_string(&w, state.note);
		else
			bci_jsonw_null(&w);
		disk_json(&s->schedule, &w, m->name);
		console_json(&s->schedule, &w, m);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_object_end(&w);
	bci_jsonw_finish(&w);
	fputc('\n', f);
	fclose(f);
	answer_text(a, 200, "application/json", body);
	snprintf(a->note, sizeof(a->note), "%zu machine state(s)", s->inventory->machine_count);
}

void bci_schedule_http_answer(struct bci_schedule_server *s, const char *method, const char *url,
			      const char *host, bool tls, struct bci_schedule_answer *a)
{
	struct bci_schedule_route route;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (!s) {
		answer_error(a, 404, "the scheduler is off (no %s in the data folder)",
			     BCI_INVENTORY_FILE);
		return;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		answer_error(a, 405, "%s takes GET%s", url,
			     strncmp(url, "/api/v1/builds/", 15) &&
			     strncmp(url, "/api/v1/known-good/", 19) ? "" : " or PUT");
		return;
	}
	if (bci_schedule_route_parse(url, &route) < 0 || route.kind == BCI_SCHEDULE_ROUTE_BUILD ||
	    route.kind == BCI_SCHEDULE_ROUTE_KNOWN_GOOD) {
		answer_error(a, 404, "no such path");
		return;
	}
	pthread_mutex_lock(&s->lock);
	switch (route.kind) {
	case BCI_SCHEDULE_ROUTE_BOOT:
		boot_answer(s, route.first, host, tls, a);
		break;
	case BCI_SCHEDULE_ROUTE_BUILD_FILE:
	case BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE:
		file_answer(s, &route, a);
		break;
	case BCI_SCHEDULE_ROUTE_JOB_INITRD:
	case BCI_SCHEDULE_ROUTE_DEPLOY_INITRD:
		initrd_answer(s, &route, a);
		break;
	case BCI_SCHEDULE_ROUTE_STATES:
		states_answer(s, a);
		break;
	case BCI_SCHEDULE_ROUTE_BUILD:
	case BCI_SCHEDULE_ROUTE_KNOWN_GOOD:
		break;
	}
	pthread_mutex_unlock(&s->lock);
}

int bci_schedule_server_fault(struct bci_schedule_server *s, const char *machine,
			      const char *note, char *err, size_t err_size)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	inventory_refresh(s);
	ret = bci_schedule_fault(&s->schedule, machine, note, now_unix(), err, err_size);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int bci_schedule_server_hello(struct bci_schedule_server *s, const char *machine,
			      struct bci_schedule_hello *hello, char *err, size_t err_size)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	inventory_refresh(s);
	ret = bci_schedule_hello(&s->schedule, machine, now_unix(), hello, err, err_size);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void bci_schedule_server_on_power(struct bci_schedule_server *s,
				  void (*fn)(void *ctx, const char *machine, const char *action,
					     const char *how),
				  void *ctx)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->schedule.power_done = fn;
	s->schedule.power_ctx = ctx;
	pthread_mutex_unlock(&s->lock);
}

const char *bci_schedule_server_data_dir(const struct bci_schedule_server *s)
{
	return s->data_dir;
}

struct bci_store *bci_schedule_server_store(struct bci_schedule_server *s)
{
	return s->store;
}

FILE *bci_schedule_server_log(struct bci_schedule_server *s)
{
	return s->log;
}

void bci_schedule_server_lock(struct bci_schedule_server *s, bool lock)
{
	if (lock)
		pthread_mutex_lock(&s->lock);
	else
		pthread_mutex_unlock(&s->lock);
}

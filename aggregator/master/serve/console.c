// SPDX-License-Identifier: MIT
/* serve's console readers (console.h): one thread, one poll over every console. */
#include "console.h"
#include "console_log.h"
#include "console_state.h"

#include "../schedule/inventory.h"
#include "fsutil.h"
#include "message.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define CONSOLE_CONNECT_SECONDS 5.0
#define CONSOLE_BACKOFF_MIN 0.25
#define CONSOLE_BACKOFF_MAX 10.0
/* The longest the thread sleeps: the ticks (held bytes, syncs) and the inventory's check. */
#define CONSOLE_POLL_MS 250
#define CONSOLE_READ_MAX 65536

enum reader_state {
	READER_WAITING,			/* for its next try */
	READER_CONNECTING,
	READER_UP,
};

struct reader {
	char *machine;
	struct bci_inventory_console console;	/* its own copy */
	struct bci_console_log *log;
	enum reader_state state;
	int fd;
	double next_try, backoff, since;	/* since: the connect's start, or the connection's */
	char last_error[200];
	double write_error_said;	/* when a failed write was last said (a full disk: once a minute) */
	bool seen;			/* in the inventory just read */
	/* Its state file (console_state.h): what was last written, and when. */
	char *dir;
	time_t link_since;		/* connected, or down since */
	time_t last_output;		/* the last byte read (0: none) */
	struct bci_console_state written;
	bool state_written;
	double state_error_said;
};

#define WRITE_ERROR_EVERY 60.0

/* A note for a machine's console from another thread, written by the readers' thread. */
struct queued_note {
	struct queued_note *next;
	char machine[BCI_CONSOLE_MACHINE_MAX + 1];
	char text[300];
};

struct bci_consoles {
	char *data_dir;
	char inventory_path[PATH_MAX];
	struct timespec inventory_mtime;
	bool inventory_seen;
	double inventory_checked;
	uint64_t boot_max;
	unsigned silent;		/* seconds: a connected console without a byte is silent */
	FILE *log;
	pthread_mutex_t *log_lock;
	struct reader *readers;
	size_t reader_count;
	int wake[2];			/* a byte on wake[1]: a note queued, or stop */
	pthread_mutex_t queue_lock;	/* notes, stopping */
	struct queued_note *notes, *notes_tail;
	bool stopping;
	pthread_t thread;
	bool thread_started;
};

static double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void utc_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void say(struct bci_consoles *cs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct bci_consoles *cs, const char *fmt, ...)
{
	va_list ap;

	if (!cs->log)
		return;
	if (cs->log_lock)
		pthread_mutex_lock(cs->log_lock);
	fputs("serve: ", cs->log);
	va_start(ap, fmt);
	vfprintf(cs->log, fmt, ap);
	va_end(ap);
	fputc('\n', cs->log);
	fflush(cs->log);
	if (cs->log_lock)
		pthread_mutex_unlock(cs->log_lock);
}

/* ---- one reader ---- */

static void reader_close_fd(struct reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/* The connection failed or was lost: say so (once per reason while it is down), try again later. */
static void reader_down(struct bci_consoles *cs, struct reader *r, double now, const char *why)
{
	bool was_up = r->state == READER_UP;
	char when[32];

	reader_close_fd(r);
	/* A connection that lasted starts the backoff over; one dropped at once doubles it. */
	if ((was_up && now - r->since >= CONSOLE_BACKOFF_MAX) || r->backoff < CONSOLE_BACKOFF_MIN)
		r->backoff = CONSOLE_BACKOFF_MIN;
	else
		r->backoff = r->backoff * 2 > CONSOLE_BACKOFF_MAX ? CONSOLE_BACKOFF_MAX : r->backoff * 2;
	r->next_try = now + r->backoff;
	r->state = READER_WAITING;
	if (was_up)
		r->link_since = time(NULL);
	if (was_up) {
		utc_now(when);
		bci_console_log_note(r->log, "lost %s at %s: %s", r->console.spec, when, why);
		say(cs, "console %s: lost %s: %s; reconnecting", r->machine, r->console.spec, why);
	} else if (strcmp(r->last_error, why)) {
		say(cs, "console %s: %s: %s; trying again (every %g s at most)", r->machine,
		    r->console.spec, why, CONSOLE_BACKOFF_MAX);
	}
	snprintf(r->last_error, sizeof(r->last_error), "%s", why);
}

static void reader_up(struct bci_consoles *cs, struct reader *r, double now)
{
	char when[32];

	r->state = READER_UP;
	r->since = now;
	r->link_since = time(NULL);
	r->last_error[0] = '\0';
	utc_now(when);
	bci_console_log_note(r->log, "reading %s from %s", r->console.spec, when);
	say(cs, "console %s: reading %s", r->machine, r->console.spec);
}

static int tty_open(const struct bci_inventory_console *console)
{
	int fd = open(console->path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct termios t;

	if (fd < 0)
		return -errno;
	if (console->baud && isatty(fd)) {
		static const struct { unsigned baud; speed_t speed; } speeds[] = {
			{ 1200, B1200 }, { 2400, B2400 }, { 4800, B4800 }, { 9600, B9600 },
			{ 19200, B19200 }, { 38400, B38400 }, { 57600, B57600 },
			{ 115200, B115200 }, { 230400, B230400 }, { 460800, B460800 },
			{ 921600, B921600 },
		};

		if (tcgetattr(fd, &t) == 0) {
			cfmakeraw(&t);
			t.c_cflag |= CLOCAL | CREAD;
			for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
				if (speeds[i].baud == console->baud)
					cfsetspeed(&t, speeds[i].speed);
			if (tcsetattr(fd, TCSANOW, &t) < 0) {
				int ret = -errno;

				close(fd);
				return ret;
			}
		}
	}
	return fd;
}

static void reader_try(struct bci_consoles *cs, struct reader *r, double now)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char why[200];
	int one = 1;

	if (r->console.kind == BCI_CONSOLE_TTY) {
		r->fd = tty_open(&r->console);
		if (r->fd < 0) {
			snprintf(why, sizeof(why), "%s", strerror(-r->fd));
			r->fd = -1;
			reader_down(cs, r, now, why);
			return;
		}
		reader_up(cs, r, now);
		return;
	}
	memset(&addr, 0, sizeof(addr));
	if (inet_pton(AF_INET, r->console.address, &((struct sockaddr_in *)&addr)->sin_addr) == 1) {
		((struct sockaddr_in *)&addr)->sin_family = AF_INET;
		((struct sockaddr_in *)&addr)->sin_port = htons((uint16_t)r->console.port);
		addr_len = sizeof(struct sockaddr_in);
	} else {
		inet_pton(AF_INET6, r->console.address, &((struct sockaddr_in6 *)&addr)->sin6_addr);
		((struct sockaddr_in6 *)&addr)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&addr)->sin6_port = htons((uint16_t)r->console.port);
		addr_len = sizeof(struct sockaddr_in6);
	}
	r->fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->fd < 0) {
		reader_down(cs, r, now, strerror(errno));
		return;
	}
	/* A console server that vanished without a word (its host died) is found by keepalives. */
	setsockopt(r->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	{
		int idle = 60, interval = 10, count = 3;

		setsockopt(r->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		setsockopt(r->fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
		setsockopt(r->fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
	}
	r->since = now;
	if (connect(r->fd, (struct sockaddr *)&addr, addr_len) == 0) {
		reader_up(cs, r, now);
		return;
	}
	if (errno == EINPROGRESS) {
		r->state = READER_CONNECTING;
		return;
	}
	reader_down(cs, r, now, strerror(errno));
}

/* What poll said about @r's descriptor. */
static void reader_event(struct bci_consoles *cs, struct reader *r, short revents, double now)
{
	char buf[CONSOLE_READ_MAX], why[300];
	int error = 0, ret;
	socklen_t len = sizeof(error);
	ssize_t n;

	if (r->state == READER_CONNECTING) {
		if (getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &error, &len) < 0)
			error = errno;
		if (error)
			reader_down(cs, r, now, strerror(error));
		else
			reader_up(cs, r, now);
		return;
	}
	/* Read what there is, a bounded amount per turn so one flood cannot starve the others. */
	for (int turn = 0; turn < 16; turn++) {
		n = read(r->fd, buf, sizeof(buf));
		if (n > 0) {
			r->last_output = time(NULL);
			if ((ret = bci_console_log_feed(r->log, buf, (size_t)n, now)) < 0 &&
			    (!r->write_error_said || now - r->write_error_said >= WRITE_ERROR_EVERY)) {
				r->write_error_said = now;
				say(cs, "console %s: cannot keep what it read: %s (said once a minute "
					"while it lasts)", r->machine, strerror(-ret));
			}
			if ((size_t)n < sizeof(buf))
				return;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == 0)
			snprintf(why, sizeof(why), "%s",
				 r->console.kind == BCI_CONSOLE_TCP ? "closed by the console server" :
								      "the tty closed");
		else
			snprintf(why, sizeof(why), "%s", strerror(errno));
		reader_down(cs, r, now, why);
		return;
	}
	(void)revents;
}

/*
 * Writes @r's state file when its state, boot or flood changed, and at least
 * every BCI_CONSOLE_STATE_EVERY seconds (its last output, the bytes dropped so
 * far, and that serve still reads it).
 */
static void reader_state(struct bci_consoles *cs, struct reader *r, double now, time_t wall)
{
	struct bci_console_state state = { 0 }, *old = &r->written;
	struct bci_console_log_status status;
	int ret;

	snprintf(state.console, sizeof(state.console), "%s", r->console.spec);
	if (r->state == READER_UP) {
		time_t quiet_from = r->last_output > r->link_since ? r->last_output : r->link_since;

		state.link = wall - quiet_from >= (time_t)cs->silent ? BCI_CONSOLE_SILENT :
								       BCI_CONSOLE_CONNECTED;
		state.since = state.link == BCI_CONSOLE_SILENT ? quiet_from : r->link_since;
	} else {
		state.link = BCI_CONSOLE_RECONNECTING;
		state.since = r->link_since;
		snprintf(state.reason, sizeof(state.reason), "%s",
			 r->last_error[0] ? r->last_error : "connecting");
	}
	state.last_output = r->last_output;
	bci_console_log_status(r->log, &status);
	state.boot = status.boot;
	state.flooding = status.flooding;
	state.flooded_boots = status.flooded_boots;
	state.last_flooded_boot = status.last_flooded_boot;
	state.last_dropped = status.last_dropped;
	/* The bytes dropped so far grow with a flood: they wait for the next write. */
	if (r->state_written && state.link == old->link && state.since == old->since &&
	    !strcmp(state.reason, old->reason) && state.boot == old->boot &&
	    state.flooding == old->flooding && state.flooded_boots == old->flooded_boots &&
	    wall - old->updated < BCI_CONSOLE_STATE_EVERY)
		return;
	state.updated = wall;
	ret = bci_console_state_write(r->dir, &state);
	if (ret < 0) {
		if (!r->state_error_said || now - r->state_error_said >= WRITE_ERROR_EVERY) {
			r->state_error_said = now;
			say(cs, "console %s: cannot write its state file: %s (said once a minute while "
				"it lasts)", r->machine, strerror(-ret));
		}
		return;
	}
	r->written = state;
	r->state_written = true;
}

static void reader_free(struct reader *r)
{
	reader_close_fd(r);
	bci_console_log_close(r->log);
	free(r->dir);
	free(r->machine);
	bci_inventory_console_clear(&r->console);
}

static bool console_same(const struct bci_inventory_console *a, const struct bci_inventory_console *b)
{
	return a->kind == b->kind && !strcmp(a->spec ? a->spec : "", b->spec ? b->spec : "");
}

/* A copy of @from's strings (the inventory is freed after each read). */
static int console_copy(struct bci_inventory_console *to, const struct bci_inventory_console *from)
{
	char why[200];

	return bci_inventory_console_parse(from->spec, to, why, sizeof(why));
}

static int reader_add(struct bci_consoles *cs, const struct bci_inventory_machine *m)
{
	struct reader *grown, *r;
	char dir[PATH_MAX], err[400];
	int ret;

	grown = realloc(cs->readers, (cs->reader_count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	cs->readers = grown;
	r = &cs->readers[cs->reader_count];
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->seen = true;
	r->link_since = time(NULL);
	if (!(r->machine = strdup(m->name)) || (ret = console_copy(&r->console, &m->console)) < 0) {
		free(r->machine);
		return -ENOMEM;
	}
	if ((ret = bci_consoles_dir(cs->data_dir, m->name, dir, sizeof(dir))) < 0 ||
	    (ret = bci_console_log_open(dir, m->name, cs->boot_max, cs->log, cs->log_lock, &r->log,
					err, sizeof(err))) < 0) {
		say(cs, "console %s: not read: %s", m->name,
		    ret == -ENAMETOOLONG ? "its folder's path is too long" : err);
		free(r->machine);
		bci_inventory_console_clear(&r->console);
		return ret;
	}
	if (!(r->dir = strdup(dir))) {
		bci_console_log_close(r->log);
		free(r->machine);
		bci_inventory_console_clear(&r->console);
		return -ENOMEM;
	}
	cs->reader_count++;
	return 0;
}

/* Re-reads the inventory when it changed; the consoles follow it. */
static void inventory_refresh(struct bci_consoles *cs, double now)
{
	struct bci_inventory *inv;
	char err[600];
	struct stat st;
	size_t i;

	if (cs->inventory_checked && now - cs->inventory_checked < 1.0)
		return;
	cs->inventory_checked = now;
	if (stat(cs->inventory_path, &st) < 0)
		return;		/* none yet, or gone for a moment: the consoles go on */
	if (cs->inventory_seen && st.st_mtim.tv_sec == cs->inventory_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == cs->inventory_mtime.tv_nsec)
		return;
	cs->inventory_seen = true;
	cs->inventory_mtime = st.st_mtim;
	if (bci_inventory_load(cs->inventory_path, &inv, err, sizeof(err)) < 0) {
		say(cs, "consoles: %s (keeping the consoles read before)", err);
		return;
	}
	for (i = 0; i < cs->reader_count; i++)
		cs->readers[i].seen = false;
	for (size_t m = 0; m < inv->machine_count; m++) {
		const struct bci_inventory_machine *machine = &inv->machines[m];

		if (machine->console.kind == BCI_CONSOLE_NONE)
			continue;
		for (i = 0; i < cs->reader_count; i++)
			if (!strcmp(cs->readers[i].machine, machine->name))
				break;
		if (i < cs->reader_count && console_same(&cs->readers[i].console, &machine->console)) {
			cs->readers[i].seen = true;
			continue;
		}
		if (i < cs->reader_count) {
			/* Its console moved: the old reader goes, a new one reads the new place. */
			bci_console_log_note(cs->readers[i].log, "console now %s (was %s)",
					     machine->console.spec, cs->readers[i].console.spec);
			say(cs, "console %s: now %s (was %s)", machine->name, machine->console.spec,
			    cs->readers[i].console.spec);
			reader_free(&cs->readers[i]);
			cs->readers[i] = cs->readers[--cs->reader_count];
		}
		reader_add(cs, machine);
	}
	for (i = 0; i < cs->reader_count;) {
		if (cs->readers[i].seen) {
			i++;
			continue;
		}
		say(cs, "console %s: no longer in the inventory: not read", cs->readers[i].machine);
		bci_console_log_note(cs->readers[i].log, "no longer read (not in the inventory)");
		reader_free(&cs->readers[i]);
		cs->readers[i] = cs->readers[--cs->reader_count];
	}
	bci_inventory_free(inv);
}

/* Writes the notes other threads queued, each in its machine's console; true when stopping. */
static bool drain_queue(struct bci_consoles *cs)
{
	struct queued_note *notes, *next;
	char bytes[64];
	bool stopping;

	while (read(cs->wake[0], bytes, sizeof(bytes)) > 0)
		;
	pthread_mutex_lock(&cs->queue_lock);
	notes = cs->notes;
	cs->notes = cs->notes_tail = NULL;
	stopping = cs->stopping;
	pthread_mutex_unlock(&cs->queue_lock);
	for (; notes; notes = next) {
		next = notes->next;
		for (size_t i = 0; i < cs->reader_count; i++)
			if (!strcmp(cs->readers[i].machine, notes->machine))
				bci_console_log_note(cs->readers[i].log, "%s", notes->text);
		free(notes);
	}
	return stopping;
}

/* Queues @text for @machine's console, written by the readers' thread. */
static void note_queue(struct bci_consoles *cs, const char *machine, const char *text)
{
	struct queued_note *note;
	char byte = 0;

	if (!cs || strlen(machine) > BCI_CONSOLE_MACHINE_MAX || !(note = calloc(1, sizeof(*note))))
		return;
	snprintf(note->machine, sizeof(note->machine), "%s", machine);
	snprintf(note->text, sizeof(note->text), "%s", text);
	pthread_mutex_lock(&cs->queue_lock);
	if (cs->notes_tail)
		cs->notes_tail->next = note;
	else
		cs->notes = note;
	cs->notes_tail = note;
	pthread_mutex_unlock(&cs->queue_lock);
	if (write(cs->wake[1], &byte, 1) < 0 && errno != EAGAIN)
		say(cs, "consoles: cannot wake the reader: %s", strerror(errno));
}

void bci_consoles_run_served(struct bci_consoles *cs, const char *machine, const char *run_id)
{
	char when[32], text[300];

	utc_now(when);
	snprintf(text, sizeof(text), BCI_CONSOLE_RUN_NOTE "%s (its job initrd served at %s)", run_id,
		 when);
	note_queue(cs, machine, text);
}

void bci_consoles_power_done(struct bci_consoles *cs, const char *machine, const char *action,
			     const char *how)
{
	char when[32], text[300];

	utc_now(when);
	snprintf(text, sizeof(text), BCI_CONSOLE_POWER_NOTE "%s by the master at %s: %s", action,
		 when, how);
	note_queue(cs, machine, text);
}

static void *consoles_main(void *arg)
{
	struct bci_consoles *cs = arg;
	struct pollfd *fds = NULL;
	size_t fds_cap = 0;

	for (;;) {
		double now = now_monotonic();
		size_t n = 1;
		time_t wall;
		int ready;

		inventory_refresh(cs, now);
		if (fds_cap < cs->reader_count + 1) {
			struct pollfd *grown = realloc(fds, (cs->reader_count + 1) * sizeof(*fds));

			if (grown) {
				fds = grown;
				fds_cap = cs->reader_count + 1;
			}
		}
		if (!fds)
			return NULL;
		fds[0] = (struct pollfd){ .fd = cs->wake[0], .events = POLLIN };
		for (size_t i = 0; i < cs->reader_count && n < fds_cap; i++) {
			struct reader *r = &cs->readers[i];

			if (r->state == READER_WAITING && now >= r->next_try)
				reader_try(cs, r, now);
			if (r->state == READER_CONNECTING && now - r->since >= CONSOLE_CONNECT_SECONDS)
				reader_down(cs, r, now, "no answer (connect timed out)");
			if (r->state == READER_WAITING || r->fd < 0)
				continue;
			fds[n++] = (struct pollfd){ .fd = r->fd,
						    .events = r->state == READER_CONNECTING ? POLLOUT :
											      POLLIN };
		}
		ready = poll(fds, n, CONSOLE_POLL_MS);
		if (ready < 0 && errno != EINTR)
			break;
		if (ready > 0 && fds[0].revents && drain_queue(cs))
			break;
		now = now_monotonic();
		for (size_t k = 1; ready > 0 && k < n; k++) {
			if (!fds[k].revents)
				continue;
			for (size_t i = 0; i < cs->reader_count; i++)
				if (cs->readers[i].fd == fds[k].fd) {
					reader_event(cs, &cs->readers[i], fds[k].revents, now);
					break;
				}
		}
		wall = time(NULL);
		for (size_t i = 0; i < cs->reader_count; i++) {
			struct reader *r = &cs->readers[i];
			int ret = bci_console_log_tick(r->log, now);

			reader_state(cs, r, now, wall);

			if (ret < 0 && (!r->write_error_said || now - r->write_error_said >= WRITE_ERROR_EVERY)) {
				r->write_error_said = now;
				say(cs, "console %s: cannot write its file: %s (said once a minute while it "
					"lasts)", r->machine, strerror(-ret));
			}
		}
	}
	free(fds);
	return NULL;
}

void bci_consoles_stop(struct bci_consoles *cs)
{
	if (!cs)
		return;
	if (cs->thread_started) {
		char byte = 0;

		pthread_mutex_lock(&cs->queue_lock);
		cs->stopping = true;
		pthread_mutex_unlock(&cs->queue_lock);
		if (write(cs->wake[1], &byte, 1) < 0 && errno != EAGAIN)
			say(cs, "consoles: cannot wake the reader: %s", strerror(errno));
		pthread_join(cs->thread, NULL);
	}
	/* Notes queued after the thread's last turn have no reader to write them. */
	while (cs->notes) {
		struct queued_note *next = cs->notes->next;

		free(cs->notes);
		cs->notes = next;
	}
	pthread_mutex_destroy(&cs->queue_lock);
	for (size_t i = 0; i < cs->reader_count; i++)
		reader_free(&cs->readers[i]);
	free(cs->readers);
	if (cs->wake[0] >= 0)
		close(cs->wake[0]);
	if (cs->wake[1] >= 0)
		close(cs->wake[1]);
	free(cs->data_dir);
	free(cs);
}

int bci_consoles_start(const char *data_dir, uint64_t boot_max, unsigned silent, FILE *log,
		       pthread_mutex_t *log_lock, struct bci_consoles **out, char *err,
		       size_t err_size)
{
	struct bci_consoles *cs = calloc(1, sizeof(*cs));
	int ret;

	if (!cs)
		return -ENOMEM;
	cs->wake[0] = cs->wake[1] = -1;
	pthread_mutex_init(&cs->queue_lock, NULL);
	cs->boot_max = boot_max;
	cs->silent = silent ? silent : BCI_CONSOLE_SILENT_SECONDS;
	cs->log = log;
	cs->log_lock = log_lock;
	if (!(cs->data_dir = strdup(data_dir))) {
		ret = -ENOMEM;
		goto fail;
	}
	snprintf(cs->inventory_path, sizeof(cs->inventory_path), "%s/%s", data_dir,
		 BCI_INVENTORY_FILE);
	if (pipe2(cs->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		ret = -errno;
		bci_message(err, err_size, "consoles: %s", strerror(-ret));
		goto fail;
	}
	if ((ret = -pthread_create(&cs->thread, NULL, consoles_main, cs)) < 0) {
		bci_message(err, err_size, "cannot start the console reader: %s", strerror(-ret));
		goto fail;
	}
	cs->thread_started = true;
	*out = cs;
	return 0;
fail:
	bci_consoles_stop(cs);
	return ret;
}

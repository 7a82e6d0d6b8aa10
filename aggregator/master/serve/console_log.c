// SPDX-License-Identifier: MIT
/* A machine's console kept per boot (console_log.h): the writer, then the reader. */
#include "console_log.h"

#include "fsutil.h"
#include "message.h"
#include "progress_marker.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BOOT_NUMBER_MAX 999999u
/* How long a held line start waits for more bytes before it is written as it is. */
#define HOLD_SECONDS 0.5
#define SYNC_SECONDS 1.0
/* What one feed writes at once: its lines (a flood's thousands) become a write or a few. */
#define OUT_MAX 65536

/* What OVMF sends at every power on and reset (clear, home, set the mode). */
static const char firmware_reset[] = "\x1b[2J\x1b[01;01H\x1b[=3h";

enum marker {
	MARKER_NONE,
	MARKER_FIRMWARE,
	MARKER_KERNEL,
};

struct bci_console_log {
	char dir[PATH_MAX];
	char machine[130];
	uint64_t boot_max;
	FILE *log;
	pthread_mutex_t *log_lock;

	int fd;				/* the boot being written, or -1 before its first byte */
	unsigned boot;			/* its number (the highest found at open, until a cut) */
	uint64_t boot_bytes;		/* the console's bytes kept in this boot */
	uint64_t dropped;		/* between the head and the tail */
	/*
	 * Past the head (three quarters of boot_max), the boot's last bytes in
	 * two segments taking turns, each an eighth: NNNNNN.tail-K, K counting.
	 */
	int tail_fd;			/* the segment being written, or -1 */
	/*
	 * The segment before it, full, open until the next sync makes it durable
	 * (or until it is dropped: a flood's segments mostly are before a sync,
	 * and then never reach the disk), or -1.
	 */
	int tail_prev_fd;
	unsigned tail_number;		/* its K (0: none yet) */
	uint64_t tail_bytes;		/* in it */
	uint64_t tail_older;		/* in segment K - 1 (0: none) */
	bool flooding;			/* this boot passed its head */
	unsigned flooded_boots;		/* boots that did, since open */
	unsigned last_flooded;		/* the latest of them */
	uint64_t last_dropped;		/* its dropped bytes, once its tail was finished */
	bool dirty;			/* written since the last sync */
	/* Bytes for out_fd (the boot's file or a tail segment) not yet written: a feed's lines. */
	char out[OUT_MAX];
	size_t out_len;
	int out_fd;
	double synced;			/* when */

	/* The start of the current line, held until it is known to start a boot or not. */
	char hold[BCI_CONSOLE_MARKER_WINDOW];
	size_t held;
	bool deciding;			/* at a line start: bytes go to hold */
	bool escape_held;		/* the hold began at an escape inside a line */
	bool at_line_start;		/* of the file: for notes */
	double last_byte;

	/* What this boot has shown so far, for the next marker's decision. */
	bool firmware_started;		/* it began at the firmware's reset */
	bool kernel_started;		/* a kernel line seen */
	bool netbooted;			/* a run note seen: the kernel to come is this boot's */
	bool powered;			/* a power note began it: the firmware to come is its own */
	unsigned lines_since_firmware;
};

static void say(struct bci_console_log *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct bci_console_log *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->log)
		return;
	if (c->log_lock)
		pthread_mutex_lock(c->log_lock);
	fprintf(c->log, "serve: console %s: ", c->machine);
	va_start(ap, fmt);
	vfprintf(c->log, fmt, ap);
	va_end(ap);
	fputc('\n', c->log);
	fflush(c->log);
	if (c->log_lock)
		pthread_mutex_unlock(c->log_lock);
}

/* @dir is shorter than PATH_MAX - 16 (checked at open; the reader's callers build it so). */
static void boot_path(const char *dir, unsigned number, char path[PATH_MAX])
{
	if (snprintf(path, PATH_MAX, "%s/%06u.log", dir, number % (BOOT_NUMBER_MAX + 1)) >= PATH_MAX)
		path[0] = '\0';
}

/* The boot number of a file name NNNNNN.log, or 0. */
static unsigned boot_of_name(const char *name)
{
	unsigned number = 0;

	for (int i = 0; i < 6; i++) {
		if (!isdigit((unsigned char)name[i]))
			return 0;
		number = number * 10 + (unsigned)(name[i] - '0');
	}
	return strcmp(name + 6, ".log") ? 0 : number;
}

/* Opens (appending) boot c->boot; a new file's directory entry is made durable. */
static int boot_open(struct bci_console_log *c)
{
	char path[PATH_MAX];
	struct stat st;

	boot_path(c->dir, c->boot, path);
	c->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (c->fd < 0)
		return -errno;
	if (fstat(c->fd, &st) == 0 && st.st_size == 0)
		bci_fsync_dir(c->dir);
	return 0;
}

/* Writes what is held for out_fd: before that file is synced or closed, at a feed's end. */
static int out_flush(struct bci_console_log *c)
{
	int ret = 0;

	if (c->out_len)
		ret = bci_write_all(c->out_fd, c->out, c->out_len);
	c->out_len = 0;
	return ret;
}

/* @len bytes for @fd, held with those before them for the same file. */
static int out_write(struct bci_console_log *c, int fd, const char *data, size_t len)
{
	int ret;

	if (c->out_len && (fd != c->out_fd || len > sizeof(c->out) - c->out_len) &&
	    (ret = out_flush(c)) < 0)
		return ret;
	if (len >= sizeof(c->out))
		return bci_write_all(fd, data, len);
	c->out_fd = fd;
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
	return 0;
}

static int sync_now(struct bci_console_log *c, double now)
{
	int ret;

	if ((ret = out_flush(c)) < 0)
		return ret;
	if (c->fd >= 0 && c->dirty && fdatasync(c->fd) < 0)
		return -errno;
	if (c->tail_fd >= 0 && c->dirty && fdatasync(c->tail_fd) < 0)
		return -errno;
	if (c->tail_prev_fd >= 0) {
		ret = fdatasync(c->tail_prev_fd) < 0 ? -errno : 0;
		close(c->tail_prev_fd);
		c->tail_prev_fd = -1;
		if (ret < 0)
			return ret;
	}
	c->dirty = false;
	c->synced = now;
	return 0;
}

/* Writes @len bytes as they are to the current boot (opened on its first byte). */
static int put(struct bci_console_log *c, const char *data, size_t len)
{
	int ret;

	if (!len)
		return 0;
	if (c->fd < 0) {
		if (!c->boot)
			c->boot = 1;
		if ((ret = boot_open(c)) < 0)
			return ret;
	}
	if ((ret = out_write(c, c->fd, data, len)) < 0)
		return ret;
	c->dirty = true;
	c->at_line_start = data[len - 1] == '\n';
	return 0;
}

static int note_line(struct bci_console_log *c, const char *text)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s" BCI_CONSOLE_NOTE_PREFIX "%s ==\n",
			 c->at_line_start || c->fd < 0 ? "" : "\n", text);
	int ret;

	if (n >= (int)sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if ((ret = put(c, line, (size_t)n)) < 0)
		return ret;
	return sync_now(c, c->synced);
}

static uint64_t head_max(const struct bci_console_log *c)
{
	return c->boot_max - c->boot_max / 4;
}

static uint64_t segment_max(const struct bci_console_log *c)
{
	return c->boot_max / 8 ? c->boot_max / 8 : 1;
}

static void tail_path(const char *dir, unsigned boot, unsigned number, char path[PATH_MAX])
{
	if (snprintf(path, PATH_MAX, "%s/%06u.tail-%u", dir, boot % (BOOT_NUMBER_MAX + 1), number) >=
	    PATH_MAX)
		path[0] = '\0';
}

/* Past the head: into the current segment; a full one starts the next, dropping the older. */
static int tail_put(struct bci_console_log *c, const char *data, size_t len)
{
	char path[PATH_MAX];
	int ret;

	while (len) {
		uint64_t space = segment_max(c) - c->tail_bytes;
		size_t n = len < space ? len : (size_t)space;

		if (c->tail_fd < 0) {
			c->tail_number++;
			tail_path(c->dir, c->boot, c->tail_number, path);
			c->tail_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
			if (c->tail_fd < 0)
				return -errno;
			if (c->tail_number > 2) {
				/* Segment K - 2 is dropped: its bytes are counted, its name removed. */
				tail_path(c->dir, c->boot, c->tail_number - 2, path);
				unlink(path);
			}
		}
		if ((ret = out_write(c, c->tail_fd, data, n)) < 0)
			return ret;
		c->dirty = true;
		c->tail_bytes += n;
		data += n;
		len -= n;
		if (c->tail_bytes == segment_max(c)) {
			if ((ret = out_flush(c)) < 0)
				return ret;
			/* The one before the previous is dropped next: its bytes need no sync. */
			if (c->tail_prev_fd >= 0)
				close(c->tail_prev_fd);
			c->tail_prev_fd = c->tail_fd;
			c->tail_fd = -1;
			c->dropped += c->tail_older;
			c->tail_older = c->tail_bytes;
			c->tail_bytes = 0;
		}
	}
	return 0;
}

/* Copies file @path (if there) to the end of the boot's file, then removes it. */
static int append_file(struct bci_console_log *c, const char *path)
{
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	while ((n = bci_read_retry(fd, buf, sizeof(buf))) > 0)
		if ((ret = put(c, buf, (size_t)n)) < 0)
			break;
	if (n < 0 && ret == 0)
		ret = (int)n;
	close(fd);
	if (ret == 0)
		unlink(path);
	return ret;
}

/*
 * The boot's end (or serve's): its kept tail goes after its head, with a
 * note saying how much was dropped between them; the segments are removed.
 * @known: whether the dropped count is known (not after a restart).
 */
static int tail_finish(struct bci_console_log *c, bool known)
{
	char path[PATH_MAX], text[300];
	unsigned last = c->tail_number;
	int ret;

	if (!last)
		return 0;
	if ((ret = out_flush(c)) < 0)
		return ret;
	/* Their bytes are appended to the boot's file, which is synced. */
	if (c->tail_prev_fd >= 0) {
		close(c->tail_prev_fd);
		c->tail_prev_fd = -1;
	}
	if (c->tail_fd >= 0) {
		close(c->tail_fd);
		c->tail_fd = -1;
	}
	if (known) {
		snprintf(text, sizeof(text), "%llu bytes of boot %u dropped here (past its limit); "
			 "its last %llu bytes follow", (unsigned long long)c->dropped, c->boot,
			 (unsigned long long)(c->tail_older + c->tail_bytes));
		say(c, "%llu bytes of boot %u dropped (past its limit of %llu bytes), its last %llu kept",
		    (unsigned long long)c->dropped, c->boot, (unsigned long long)c->boot_max,
		    (unsigned long long)(c->tail_older + c->tail_bytes));
	} else {
		snprintf(text, sizeof(text), "bytes of boot %u dropped here (past its limit; how many "
			 "was lost when serve stopped); its last bytes follow", c->boot);
	}
	if ((ret = note_line(c, text)) < 0)
		return ret;
	for (unsigned k = last > 1 ? last - 1 : 1; k <= last; k++) {
		tail_path(c->dir, c->boot, k, path);
		if ((ret = append_file(c, path)) < 0)
			return ret;
	}
	c->tail_number = 0;
	c->tail_bytes = 0;
	c->tail_older = 0;
	if (known)
		c->last_dropped = c->dropped;
	c->dropped = 0;
	if ((ret = sync_now(c, c->synced)) < 0)
		return ret;
	bci_fsync_dir(c->dir);
	return 0;
}

/* The console's own bytes: the head kept up to three quarters of boot_max, then the tail. */
static int keep(struct bci_console_log *c, const char *data, size_t len)
{
	uint64_t head = head_max(c), room = c->boot_bytes < head ? head - c->boot_bytes : 0;
	char text[300];
	int ret;

	if (len <= room) {
		c->boot_bytes += len;
		return put(c, data, len);
	}
	if (room) {
		c->boot_bytes += room;
		if ((ret = put(c, data, room)) < 0)
			return ret;
	}
	if (!c->flooding) {
		c->flooding = true;
		c->flooded_boots++;
		c->last_flooded = c->boot;
		c->last_dropped = 0;
		snprintf(text, sizeof(text),
			 "boot %u passed %llu bytes (--console-boot-max %llu): its middle is dropped, "
			 "its last part kept at its end", c->boot, (unsigned long long)head,
			 (unsigned long long)c->boot_max);
		if ((ret = note_line(c, text)) < 0)
			return ret;
		say(c, "boot %u passed %llu bytes (--console-boot-max %llu): its middle is dropped, "
		       "its last part kept", c->boot, (unsigned long long)head,
		    (unsigned long long)c->boot_max);
	}
	return tail_put(c, data + room, len - room);
}

/* Ends the current boot (says what it dropped, syncs, closes); the next byte opens boot + 1. */
static int cut(struct bci_console_log *c)
{
	int ret = tail_finish(c, true), flushed = out_flush(c);

	if (ret == 0)
		ret = flushed;
	if (c->fd >= 0) {
		if (ret == 0)
			ret = sync_now(c, c->synced);
		close(c->fd);
		c->fd = -1;
	}
	if (c->boot >= BOOT_NUMBER_MAX)
		return -EOVERFLOW;
	c->boot++;
	c->boot_bytes = 0;
	c->dropped = 0;
	c->flooding = false;
	c->at_line_start = true;
	c->firmware_started = false;
	c->kernel_started = false;
	c->netbooted = false;
	c->powered = false;
	c->lines_since_firmware = 0;
	return ret;
}

/* Whether @line (@len bytes: a line's start) is the firmware's reset or the kernel's first line. */
static enum marker classify(const char *line, size_t len)
{
	static const char firmware[] = "\x1b[=3h", kernel[] = "Linux version ";
	size_t i = 0;

	if (memmem(line, len, firmware, sizeof(firmware) - 1))
		return MARKER_FIRMWARE;
	if (len && line[0] == '[') {
		/* printk's time stamp: "[" blanks, digits "." digits "] " */
		for (i = 1; i < len && line[i] == ' '; i++)
			;
		while (i < len && (isdigit((unsigned char)line[i]) || line[i] == '.'))
			i++;
		if (i + 1 >= len || line[i] != ']' || line[i + 1] != ' ')
			return MARKER_NONE;
		i += 2;
	}
	if (len - i >= sizeof(kernel) - 1 && !memcmp(line + i, kernel, sizeof(kernel) - 1))
		return MARKER_KERNEL;
	return MARKER_NONE;
}

/* The held line start (or escape) is complete enough: cut before it if it starts a boot, then keep it. */
static int decide(struct bci_console_log *c, bool whole_line)
{
	enum marker marker = classify(c->hold, c->held);
	bool begins = false;
	int ret;

	switch (marker) {
	case MARKER_FIRMWARE:
		begins = (!c->firmware_started && !c->powered) || c->kernel_started ||
			 c->lines_since_firmware > 0;
		break;
	case MARKER_KERNEL:
		begins = (!c->firmware_started && !c->netbooted && !c->powered) || c->kernel_started;
		break;
	case MARKER_NONE:
		break;
	}
	if (begins && c->boot_bytes && (ret = cut(c)) < 0)
		return ret;
	if (marker == MARKER_FIRMWARE) {
		c->firmware_started = true;
		c->kernel_started = false;
		c->lines_since_firmware = 0;
	} else if (marker == MARKER_KERNEL) {
		c->kernel_started = true;
	} else if (whole_line) {
		c->lines_since_firmware++;
	}
	ret = keep(c, c->hold, c->held);
	c->held = 0;
	c->deciding = false;
	c->escape_held = false;
	return ret;
}

static int feed(struct bci_console_log *c, const void *data, size_t len, double now)
{
	const char *p = data, *end = p + len;
	int ret;

	if (len)
		c->last_byte = now;
	while (p < end) {
		if (c->escape_held) {
			/* A reset inside a line: only the firmware's whole reset sequence counts. */
			while (p < end && c->held < sizeof(firmware_reset) - 1 &&
			       *p == firmware_reset[c->held])
				c->hold[c->held++] = *p++;
			if (c->held == sizeof(firmware_reset) - 1) {
				c->escape_held = false;	/* now a line start: decided as one */
				continue;
			}
			if (p == end)
				break;
			c->escape_held = false;
			c->deciding = false;
			if ((ret = keep(c, c->hold, c->held)) < 0)
				return ret;
			c->held = 0;
			if (*p == '\x1b') {
				c->hold[c->held++] = *p++;
				c->escape_held = c->deciding = true;
			}
			continue;
		}
		if (c->deciding) {
			const char *newline = memchr(p, '\n', (size_t)(end - p));
			size_t take = (size_t)((newline ? newline + 1 : end) - p);

			if (take > sizeof(c->hold) - c->held)
				take = sizeof(c->hold) - c->held;
			memcpy(c->hold + c->held, p, take);
			c->held += take;
			p += take;
			if (c->hold[c->held - 1] == '\n' || c->held == sizeof(c->hold)) {
				bool whole_line = c->hold[c->held - 1] == '\n';

				if ((ret = decide(c, whole_line)) < 0)
					return ret;
				/* A line longer than the window goes on as it is, up to its newline. */
				c->deciding = whole_line;
			}
			continue;
		}
		/*
		 * Inside a line: kept as it is up to its newline, or up to an
		 * escape, held like a line start: a reset cuts a line short,
		 * and the firmware's reset comes right after the cut.
		 */
		{
			const char *stop = p;
			size_t take;

			while (stop < end && *stop != '\n' && *stop != '\x1b')
				stop++;
			take = (size_t)(stop - p) + (stop < end && *stop == '\n');
			if ((ret = keep(c, p, take)) < 0)
				return ret;
			p += take;
			if (stop < end) {
				c->deciding = true;
				if (*stop == '\n')
					c->lines_since_firmware++;
				else
					c->escape_held = true;
			}
		}
	}
	return 0;
}

int bci_console_log_feed(struct bci_console_log *c, const void *data, size_t len, double now)
{
	int ret = feed(c, data, len, now), flushed = out_flush(c);

	/* Written as read: a serve that dies next loses nothing it read. */
	return ret < 0 ? ret : flushed;
}

int bci_console_log_note(struct bci_console_log *c, const char *fmt, ...)
{
	char text[400];
	va_list ap;
	int ret;

	/* A held line start goes first, as it is: the note is about what came before it. */
	if (c->held && (ret = decide(c, false)) < 0)
		return ret;
	c->deciding = true;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (char *t = text; *t; t++)
		if (*t == '\n' || *t == '\r')
			*t = ' ';
	if (!strncmp(text, BCI_CONSOLE_RUN_NOTE, strlen(BCI_CONSOLE_RUN_NOTE))) {
		/* A netboot after a kernel ran (no firmware reset seen between): a new boot. */
		if (c->kernel_started && c->boot_bytes && (ret = cut(c)) < 0)
			return ret;
		c->netbooted = true;
	} else if (!strncmp(text, BCI_CONSOLE_POWER_NOTE, strlen(BCI_CONSOLE_POWER_NOTE))) {
		/* The master powered the machine: what follows is a boot of its own. */
		if (c->boot_bytes && (ret = cut(c)) < 0)
			return ret;
		c->powered = true;
	}
	return note_line(c, text);
}

int bci_console_log_tick(struct bci_console_log *c, double now)
{
	int ret;

	if (c->held && now - c->last_byte >= HOLD_SECONDS) {
		if ((ret = decide(c, false)) < 0)
			return ret;
	}
	if ((ret = out_flush(c)) < 0)
		return ret;
	if (c->dirty && now - c->synced >= SYNC_SECONDS)
		return sync_now(c, now);
	return 0;
}

unsigned bci_console_log_boot(const struct bci_console_log *c)
{
	return c->fd >= 0 ? c->boot : 0;
}

void bci_console_log_status(const struct bci_console_log *c, struct bci_console_log_status *out)
{
	*out = (struct bci_console_log_status){
		.boot = bci_console_log_boot(c),
		.flooding = c->flooding,
		.flooded_boots = c->flooded_boots,
		.last_flooded_boot = c->last_flooded,
		.last_dropped = c->flooding ? c->dropped : c->last_dropped,
	};
}

void bci_console_log_close(struct bci_console_log *c)
{
	if (!c)
		return;
	if (c->held)
		decide(c, false);
	tail_finish(c, true);
	out_flush(c);
	if (c->fd >= 0) {
		sync_now(c, c->synced);
		close(c->fd);
	}
	free(c);
}

/*
 * Segments of the last boot left by a serve that stopped without finishing
 * them (killed, or the machine lost power): appended now, the dropped count
 * unknown.
 */
static int tail_recover(struct bci_console_log *c)
{
	char prefix[32], path[PATH_MAX];
	struct dirent *entry;
	unsigned last = 0;
	DIR *d = opendir(c->dir);

	if (!d)
		return -errno;
	snprintf(prefix, sizeof(prefix), "%06u.tail-", c->boot);
	while ((entry = readdir(d))) {
		unsigned long k;
		char *end;

		if (strncmp(entry->d_name, prefix, strlen(prefix)))
			continue;
		k = strtoul(entry->d_name + strlen(prefix), &end, 10);
		if (!*end && k && k <= UINT_MAX && k > last)
			last = (unsigned)k;
	}
	closedir(d);
	if (!last)
		return 0;
	for (unsigned k = 1; k + 1 < last; k++) {
		tail_path(c->dir, c->boot, k, path);
		unlink(path);
	}
	c->tail_number = last;
	return tail_finish(c, false);
}

int bci_console_log_open(const char *dir, const char *machine, uint64_t boot_max, FILE *log,
			 pthread_mutex_t *log_lock, struct bci_console_log **out, char *err,
			 size_t err_size)
{
	struct bci_console_log *c;
	struct bci_console_boot *boots = NULL;
	size_t count = 0;
	int ret;

	if (strlen(dir) >= sizeof(c->dir) - 16) {
		bci_message(err, err_size, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	if ((ret = bci_mkdir_p(dir, 0755)) < 0) {
		bci_message(err, err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	if ((ret = bci_console_log_list(dir, &boots, &count)) < 0) {
		bci_message(err, err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		free(boots);
		return -ENOMEM;
	}
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	snprintf(c->machine, sizeof(c->machine), "%s", machine);
	c->boot_max = boot_max ? boot_max : BCI_CONSOLE_BOOT_MAX_DEFAULT;
	c->log = log;
	c->log_lock = log_lock;
	c->fd = -1;
	c->tail_fd = -1;
	c->tail_prev_fd = -1;
	c->deciding = true;
	c->at_line_start = true;
	if (count) {
		/*
		 * A boot begun before serve stopped goes on: what serve did not
		 * read meanwhile is gone either way, and the next reset cuts.
		 */
		c->boot = boots[count - 1].number;
		c->boot_bytes = boots[count - 1].size;
		if ((ret = boot_open(c)) < 0) {
			bci_message(err, err_size, "%s: boot %u: %s", dir, c->boot, strerror(-ret));
			free(boots);
			free(c);
			return ret;
		}
		c->firmware_started = true;
		c->lines_since_firmware = 1;
		c->at_line_start = false;
		if (c->boot_bytes >= head_max(c)) {
			/* Its cut was said before serve stopped. */
			c->flooding = true;
			c->flooded_boots = 1;
			c->last_flooded = c->boot;
		}
		{
			char last = '\n';
			char path[PATH_MAX];
			int fd;

			boot_path(dir, c->boot, path);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && boots[count - 1].size &&
			    pread(fd, &last, 1, (off_t)boots[count - 1].size - 1) == 1)
				c->at_line_start = last == '\n';
			else
				c->at_line_start = true;
			if (fd >= 0)
				close(fd);
		}
		if ((ret = tail_recover(c)) < 0) {
			bci_message(err, err_size, "%s: boot %u's tail: %s", dir, c->boot, strerror(-ret));
			close(c->fd);
			free(boots);
			free(c);
			return ret;
		}
	}
	free(boots);
	*out = c;
	return 0;
}

/* ---- the reader ---- */

int bci_consoles_dir(const char *data_dir, const char *machine, char *out, size_t size)
{
	int n = snprintf(out, size, "%s/%s/%s", data_dir, BCI_CONSOLE_DIR, machine);

	return n < 0 || (size_t)n >= size || (size_t)n >= PATH_MAX - 16 ? -ENAMETOOLONG : 0;
}

static int compare_boots(const void *a, const void *b)
{
	const struct bci_console_boot *x = a, *y = b;

	return x->number < y->number ? -1 : x->number > y->number;
}

int bci_console_log_list(const char *dir, struct bci_console_boot **out, size_t *count)
{
	struct bci_console_boot *boots = NULL;
	size_t n = 0, capacity = 0;
	struct dirent *entry;
	DIR *d = opendir(dir);

	*out = NULL;
	*count = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((entry = readdir(d))) {
		unsigned number = boot_of_name(entry->d_name);
		struct stat st;

		if (!number || fstatat(dirfd(d), entry->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == capacity) {
			struct bci_console_boot *grown;

			capacity = capacity ? capacity * 2 : 16;
			grown = realloc(boots, capacity * sizeof(*boots));
			if (!grown) {
				free(boots);
				closedir(d);
				return -ENOMEM;
			}
			boots = grown;
		}
		boots[n++] = (struct bci_console_boot){ .number = number,
							.size = (uint64_t)st.st_size,
							.modified = st.st_mtim.tv_sec };
	}
	closedir(d);
	if (n)
		qsort(boots, n, sizeof(*boots), compare_boots);
	*out = boots;
	*count = n;
	return 0;
}

int bci_console_log_open_boot(const char *dir, unsigned number)
{
	char path[PATH_MAX];
	int fd;

	if (!number || number > BOOT_NUMBER_MAX)
		return -ENOENT;
	boot_path(dir, number, path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/* A line's start as the marker parser reads it: up to the name's length, NUL-terminated. */
#define LINE_START_MAX \
	(BCI_PROGRESS_PREFIX_WINDOW + sizeof(((struct bci_console_in_flight *)0)->name))
#define SCAN_BLOCK 65536
/* How far back from a boot's end a job's start is looked for: past its limit, a boot has no more. */
#define SCAN_MAX (64ULL << 20)

/*
 * From the end backwards: the last job start, and whether its end came after
 * it (an end line of the same job between it and the end). A crash is near
 * the end, so this reads little of a long boot.
 */
int bci_console_log_in_flight(int fd, struct bci_console_in_flight *out)
{
	unsigned ended[64];
	size_t ended_count = 0;
	char *block = malloc(SCAN_BLOCK), start[LINE_START_MAX + 1];
	uint64_t size, low, line_end;
	struct stat st;
	int ret = 0;

	if (!block)
		return -ENOMEM;
	if (fstat(fd, &st) < 0) {
		free(block);
		return -errno;
	}
	size = (uint64_t)st.st_size;
	line_end = size;
	/* Each turn: the block before line_end; its lines from the last to the first. */
	for (uint64_t high = size; high > 0 && size - high < SCAN_MAX; high = low) {
		ssize_t got;
		size_t i;

		low = high > SCAN_BLOCK ? high - SCAN_BLOCK : 0;
		got = pread(fd, block, (size_t)(high - low), (off_t)low);
		if (got != (ssize_t)(high - low)) {
			ret = got < 0 ? -errno : -EIO;
			break;
		}
		for (i = (size_t)(high - low); i-- > 0 || low == 0;) {
			struct bci_progress_marker marker;
			uint64_t line_start;
			size_t len;

			if (i != (size_t)-1 && block[i] != '\n')
				continue;
			line_start = low + i + 1;	/* i == -1: the file's first line */
			if (line_start < line_end) {
				len = line_end - line_start < LINE_START_MAX ? (size_t)(line_end - line_start) :
										LINE_START_MAX;
				if (line_start + len <= high)
					memcpy(start, block + (line_start - low), len);
				else if (pread(fd, start, len, (off_t)line_start) != (ssize_t)len)
					len = 0;
				start[len] = '\0';
				switch (bci_progress_parse(start, len, &marker)) {
				case BCI_PROGRESS_END:
					if (ended_count < sizeof(ended) / sizeof(ended[0]))
						ended[ended_count++] = marker.number;
					break;
				case BCI_PROGRESS_START:
					for (size_t k = 0; k < ended_count; k++)
						if (ended[k] == marker.number)
							goto out;	/* the last job started had ended */
					out->index = marker.number;
					out->total = marker.total;
					snprintf(out->name, sizeof(out->name), "%.*s", (int)marker.text_len,
						 marker.text);
					out->start = line_start;
					ret = 1;
					goto out;
				case BCI_PROGRESS_NONE:
					break;
				}
			}
			line_end = line_start;
			if (i == (size_t)-1)
				break;
		}
		if (low == 0)
			break;
	}
out:
	free(block);
	return ret;
}

/* The executor's "bootci: boot N of the run;" in @head (@len bytes): N, or 0. */
static unsigned boot_line(const char *head, size_t len)
{
	static const char marker[] = BCI_CONSOLE_BOOT_LINE;
	const char *at, *end = head + len;

	for (at = head; (at = memmem(at, (size_t)(end - at), marker, sizeof(marker) - 1));
	     at += sizeof(marker) - 1) {
		const char *digit = at + sizeof(marker) - 1, *p = digit;
		unsigned long n = 0;

		while (p < end && *p >= '0' && *p <= '9' && n <= 999999)
			n = n * 10 + (unsigned long)(*p++ - '0');
		if (p > digit && n && n <= 999999 &&
		    (size_t)(end - p) >= strlen(BCI_CONSOLE_BOOT_LINE_END) &&
		    !memcmp(p, BCI_CONSOLE_BOOT_LINE_END, strlen(BCI_CONSOLE_BOOT_LINE_END)))
			return (unsigned)n;
	}
	return 0;
}

int bci_console_log_run_boot(int fd, char run_id[BCI_CONSOLE_RUN_MAX + 1], unsigned *boot)
{
	static const char note[] = BCI_CONSOLE_NOTE_PREFIX BCI_CONSOLE_RUN_NOTE;
	char *head = malloc(BCI_CONSOLE_RUN_SCAN + 1), *at;
	ssize_t got;
	int ret = 0;

	if (boot)
		*boot = 0;
	if (!head)
		return -ENOMEM;
	got = pread(fd, head, BCI_CONSOLE_RUN_SCAN, 0);
	if (got < 0) {
		free(head);
		return -errno;
	}
	head[got] = '\0';
	/* A note is a line of its own; the console's bytes may hold NULs: memmem, not strstr. */
	for (at = head; (at = memmem(at, (size_t)(head + got - at), note, sizeof(note) - 1));
	     at += sizeof(note) - 1) {
		const char *word = at + sizeof(note) - 1;
		size_t len = strcspn(word, " \r\n");

		if ((at == head || at[-1] == '\n') && len && len <= BCI_CONSOLE_RUN_MAX) {
			memcpy(run_id, word, len);
			run_id[len] = '\0';
			ret = 1;
			break;
		}
	}
	/* The executor speaks after the run note (serve writes it as it hands out the initrd). */
	if (ret == 1 && boot)
		*boot = boot_line(at, (size_t)(head + got - at));
	free(head);
	return ret;
}

int bci_console_log_run(int fd, char run_id[BCI_CONSOLE_RUN_MAX + 1])
{
	return bci_console_log_run_boot(fd, run_id, NULL);
}

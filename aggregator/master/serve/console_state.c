// SPDX-License-Identifier: MIT
/* A console reader's state file (console_state.h): the writer, the reader, how it is shown. */
#include "console_state.h"
#include "console_log.h"

#include "fsutil.h"
#include "jsonw.h"
#include "message.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_MAX 4096

static const char *const link_names[] = {
	[BCI_CONSOLE_CONNECTED] = "connected",
	[BCI_CONSOLE_SILENT] = "silent",
	[BCI_CONSOLE_RECONNECTING] = "reconnecting",
};

const char *bci_console_link_name(enum bci_console_link link)
{
	return (unsigned)link < sizeof(link_names) / sizeof(link_names[0]) ? link_names[link] : "?";
}

/* @text on one line: a newline in a reason would start a key of its own. */
static void one_line(char *text)
{
	for (; *text; text++)
		if (*text == '\n' || *text == '\r')
			*text = ' ';
}

int bci_console_state_write(const char *dir, const struct bci_console_state *state)
{
	char path[PATH_MAX], text[STATE_MAX], console[sizeof(state->console)],
		reason[sizeof(state->reason)];
	int n;

	if (snprintf(path, sizeof(path), "%s/" BCI_CONSOLE_STATE_FILE, dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	snprintf(console, sizeof(console), "%s", state->console);
	snprintf(reason, sizeof(reason), "%s", state->reason);
	one_line(console);
	one_line(reason);
	n = snprintf(text, sizeof(text),
		     "# bootci-serve console state (console_state.h)\n"
		     "console %s\nstate %s\nsince %lld\n", console, bci_console_link_name(state->link),
		     (long long)state->since);
	if (state->link == BCI_CONSOLE_RECONNECTING && reason[0])
		n += snprintf(text + n, sizeof(text) - (size_t)n, "reason %s\n", reason);
	if (state->last_output)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "last_output %lld\n",
			      (long long)state->last_output);
	n += snprintf(text + n, sizeof(text) - (size_t)n,
		      "boot %u\nflooding %d\nflooded_boots %u\nlast_flooded_boot %u\n"
		      "last_dropped %" PRIu64 "\nupdated %lld\n", state->boot, state->flooding,
		      state->flooded_boots, state->last_flooded_boot, state->last_dropped,
		      (long long)state->updated);
	return bci_write_file_atomic(path, text, (size_t)n, 0644);
}

/* A decimal of at most @max at @value: 0, or -EINVAL. */
static int number(const char *value, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*value < '0' || *value > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(value, &end, 10);
	return *end || errno || *out > max ? -EINVAL : 0;
}

int bci_console_state_read(const char *dir, struct bci_console_state *state, char *err,
			   size_t err_size)
{
	char path[PATH_MAX], *text = NULL, *line, *next;
	unsigned long long v;
	unsigned line_number = 0;
	size_t len;
	int ret;

	memset(state, 0, sizeof(*state));
	if (snprintf(path, sizeof(path), "%s/" BCI_CONSOLE_STATE_FILE, dir) >= (int)sizeof(path)) {
		bci_message(err, err_size, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	ret = bci_read_file(path, &text, &len, STATE_MAX);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (strlen(text) != len) {
		ret = -EINVAL;
		bci_message(err, err_size, "%s: a NUL byte: not a console state", path);
		goto out;
	}
	for (line = text; *line; line = next) {
		char *value;
		int bad = 0;

		line_number++;
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (!*line || *line == '#')
			continue;
		value = strchr(line, ' ');
		if (!value) {
			bad = -EINVAL;
		} else {
			*value++ = '\0';
			if (!strcmp(line, "console")) {
				snprintf(state->console, sizeof(state->console), "%s", value);
			} else if (!strcmp(line, "reason")) {
				snprintf(state->reason, sizeof(state->reason), "%s", value);
			} else if (!strcmp(line, "state")) {
				size_t k;

				for (k = 0; k < sizeof(link_names) / sizeof(link_names[0]); k++)
					if (!strcmp(value, link_names[k]))
						break;
				bad = k < sizeof(link_names) / sizeof(link_names[0]) ? 0 : -EINVAL;
				state->link = (enum bci_console_link)k;
			} else if (!strcmp(line, "since") && !(bad = number(value, INT64_MAX, &v))) {
				state->since = (time_t)v;
			} else if (!strcmp(line, "last_output") && !(bad = number(value, INT64_MAX, &v))) {
				state->last_output = (time_t)v;
			} else if (!strcmp(line, "updated") && !(bad = number(value, INT64_MAX, &v))) {
				state->updated = (time_t)v;
			} else if (!strcmp(line, "boot") && !(bad = number(value, UINT_MAX, &v))) {
				state->boot = (unsigned)v;
			} else if (!strcmp(line, "flooding") && !(bad = number(value, 1, &v))) {
				state->flooding = v;
			} else if (!strcmp(line, "flooded_boots") && !(bad = number(value, UINT_MAX, &v))) {
				state->flooded_boots = (unsigned)v;
			} else if (!strcmp(line, "last_flooded_boot") &&
				   !(bad = number(value, UINT_MAX, &v))) {
				state->last_flooded_boot = (unsigned)v;
			} else if (!strcmp(line, "last_dropped") &&
				   !(bad = number(value, UINT64_MAX, &v))) {
				state->last_dropped = v;
			}
		}
		if (bad) {
			ret = -EINVAL;
			bci_message(err, err_size, "%s: line %u: '%.40s' is no key and value of a "
				    "console state", path, line_number, line);
			goto out;
		}
	}
	ret = state->updated && state->console[0] ? 1 : -EINVAL;
	if (ret < 0)
		bci_message(err, err_size, "%s: no console or updated line: not a console state", path);
out:
	free(text);
	return ret;
}

int bci_console_state_of(const char *data_dir, const char *machine, struct bci_console_state *state,
			 char *err, size_t err_size)
{
	char dir[PATH_MAX];

	if (bci_consoles_dir(data_dir, machine, dir, sizeof(dir)) < 0) {
		bci_message(err, err_size, "console of %s: its folder's path is too long", machine);
		return -ENAMETOOLONG;
	}
	return bci_console_state_read(dir, state, err, err_size);
}

static void utc(time_t t, char out[32])
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 32, "%lld", (long long)t);
}

static bool stale(const struct bci_console_state *state, time_t now)
{
	return now - state->updated > BCI_CONSOLE_STATE_STALE;
}

void bci_console_state_line(const struct bci_console_state *state, time_t now, char *buf,
			    size_t size)
{
	char since[32], when[32];
	size_t n = 0;

#define ADD(...)                                                                      \
	do {                                                                          \
		if (n < size)                                                         \
			n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__);        \
	} while (0)

	if (!size)
		return;
	buf[0] = '\0';
	if (stale(state, now)) {
		utc(state->updated, when);
		ADD("not read by serve since %s: ", when);
	}
	utc(state->since, since);
	ADD("%s since %s (%s)", bci_console_link_name(state->link), since, state->console);
	if (state->link == BCI_CONSOLE_RECONNECTING && state->reason[0])
		ADD(": %s", state->reason);
	if (state->boot)
		ADD(", boot %u", state->boot);
	if (state->last_output && state->link == BCI_CONSOLE_CONNECTED) {
		utc(state->last_output, when);
		ADD(", last output %s", when);
	}
	if (state->flooding)
		ADD("; boot %u flooding (%" PRIu64 " bytes dropped so far)", state->last_flooded_boot,
		    state->last_dropped);
	else if (state->flooded_boots)
		ADD("; %u boot%s flooded, the last boot %u (%" PRIu64 " bytes dropped)",
		    state->flooded_boots, state->flooded_boots == 1 ? "" : "s",
		    state->last_flooded_boot, state->last_dropped);
#undef ADD
}

void bci_console_state_json(struct bci_jsonw *w, const struct bci_console_state *state, time_t now)
{
	char line[600];

	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "console");
	bci_jsonw_string(w, state->console);
	bci_jsonw_key(w, "state");
	bci_jsonw_string(w, stale(state, now) ? "stale" : bci_console_link_name(state->link));
	bci_jsonw_key(w, "link");
	bci_jsonw_string(w, bci_console_link_name(state->link));
	bci_jsonw_key(w, "since");
	bci_jsonw_int(w, (long long)state->since);
	bci_jsonw_key(w, "reason");
	if (state->link == BCI_CONSOLE_RECONNECTING && state->reason[0])
		bci_jsonw_string(w, state->reason);
	else
		bci_jsonw_null(w);
	bci_jsonw_key(w, "last_output");
	if (state->last_output)
		bci_jsonw_int(w, (long long)state->last_output);
	else
		bci_jsonw_null(w);
	bci_jsonw_key(w, "boot");
	bci_jsonw_int(w, state->boot);
	bci_jsonw_key(w, "flooding");
	bci_jsonw_bool(w, state->flooding);
	bci_jsonw_key(w, "flooded_boots");
	bci_jsonw_int(w, state->flooded_boots);
	bci_jsonw_key(w, "last_flooded_boot");
	if (state->last_flooded_boot)
		bci_jsonw_int(w, state->last_flooded_boot);
	else
		bci_jsonw_null(w);
	bci_jsonw_key(w, "last_dropped");
	bci_jsonw_int(w, (long long)state->last_dropped);
	bci_jsonw_key(w, "updated");
	bci_jsonw_int(w, (long long)state->updated);
	bci_console_state_line(state, now, line, sizeof(line));
	bci_jsonw_key(w, "line");
	bci_jsonw_string(w, line);
	bci_jsonw_object_end(w);
}

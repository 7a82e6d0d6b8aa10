/* SPDX-License-Identifier: MIT */
/*
 * Where a machine's console reader stands, in a small file that serve's
 * console thread (console.c) rewrites and that anyone reads without serve
 * (`bootci-aggregator schedule machines`, GET /api/v1/schedule/machines, the
 * machine's console list): the writer, the reader and the one line and JSON
 * object they show, side by side.
 *
 *   DATA/consoles/<machine>/state
 *
 *   # bootci-serve console state (console_state.h)
 *   console tcp:10.0.0.5:7001
 *   state connected              connected | silent | reconnecting
 *   since 1796540000             when this state began (UTC seconds)
 *   reason connection refused    reconnecting: the last try's error (else absent)
 *   last_output 1796540100       the last byte read (absent: none since serve started)
 *   boot 12                      the boot being written (0: none yet)
 *   flooding 1                   the boot passed its limit: its middle is dropped
 *   flooded_boots 2              boots cut at their limit since serve started
 *   last_flooded_boot 12         the latest of them (0: none)
 *   last_dropped 1048576         bytes dropped in it (so far, while it floods)
 *   updated 1796540160           when serve wrote this
 *
 * One `key value` a line; a reader skips keys it does not know. `silent`: a
 * connected console that said nothing for serve's --console-silent seconds
 * (BCI_CONSOLE_SILENT_SECONDS by default), since its last byte (or its
 * connection). serve writes the file at each change
 * of state, boot or flood, and at least every BCI_CONSOLE_STATE_EVERY
 * seconds: one not updated for BCI_CONSOLE_STATE_STALE seconds is no longer
 * written by a serve (stopped, or the machine left the inventory), and is
 * shown so. Written to a temporary name, synced and renamed: a reader sees
 * the old state or the new, never a torn one.
 */
#ifndef BCI_SERVE_CONSOLE_STATE_H
#define BCI_SERVE_CONSOLE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct bci_jsonw;

#define BCI_CONSOLE_STATE_FILE "state"
#define BCI_CONSOLE_SILENT_SECONDS 60
#define BCI_CONSOLE_STATE_EVERY 60
#define BCI_CONSOLE_STATE_STALE (3 * BCI_CONSOLE_STATE_EVERY)

enum bci_console_link {
	BCI_CONSOLE_CONNECTED,
	BCI_CONSOLE_SILENT,
	BCI_CONSOLE_RECONNECTING,
};

struct bci_console_state {
	char console[256];		/* the inventory's console key */
	enum bci_console_link link;
	time_t since;
	char reason[200];		/* reconnecting: why ("" otherwise) */
	time_t last_output;		/* 0: none */
	unsigned boot;
	bool flooding;
	unsigned flooded_boots, last_flooded_boot;
	uint64_t last_dropped;
	time_t updated;
};

/* Writes @state (its @updated as is) to @dir/state, replacing it whole. 0 or -errno. */
int bci_console_state_write(const char *dir, const struct bci_console_state *state);
/*
 * Reads @dir/state into @state: 1, 0 when there is none (the console was never
 * read), -errno with @err naming the file and the problem (-EINVAL: a bad line).
 */
int bci_console_state_read(const char *dir, struct bci_console_state *state, char *err,
			   size_t err_size);

/*
 * The state of @machine's console under @data_dir (DATA/consoles/<machine>),
 * as bci_console_state_read().
 */
int bci_console_state_of(const char *data_dir, const char *machine, struct bci_console_state *state,
			 char *err, size_t err_size);

/* The words of @link: "connected", "silent", "reconnecting". */
const char *bci_console_link_name(enum bci_console_link link);

/*
 * The state in one line, as of @now: `connected since 2026-12-06T09:12:03Z
 * (tcp:10.0.0.5:7001), boot 12, last output 09:20:40Z`, `silent since ...`,
 * `reconnecting since ...: connection refused`, then `; boot 12 flooding (N
 * bytes dropped so far)` or `; 2 boots flooded, the last boot 11 (N bytes
 * dropped)`; a stale state starts `not read by serve since ...: `. No newline.
 */
void bci_console_state_line(const struct bci_console_state *state, time_t now, char *buf,
			    size_t size);

/*
 * The state as a JSON object: console, state (the link's word, or "stale"),
 * link (the link's word), since, reason, last_output, boot, flooding, flooded_boots, last_flooded_boot,
 * last_dropped, updated (times in UTC seconds, null when none), and line.
 */
void bci_console_state_json(struct bci_jsonw *w, const struct bci_console_state *state, time_t now);

#endif

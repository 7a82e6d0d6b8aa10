/* SPDX-License-Identifier: MIT */
/*
 * serve's console readers: one thread reads every machine's console that
 * DATA/machines.conf names (its console key, bootci-machines.conf(5)) and
 * keeps each per boot under DATA/consoles/<machine>/ (console_log.h).
 *
 * The thread polls all consoles at once: a TCP console server (ser2net,
 * conserver) is connected without blocking, a tty opened non-blocking. A
 * console server that refuses, closes, or does not answer within
 * CONSOLE_CONNECT_SECONDS is tried again after a backoff that doubles from
 * a quarter of a second up to CONSOLE_BACKOFF_MAX seconds (and starts over
 * once a connection has lasted that long). Each connection and each loss is
 * a note in the console's file and a line in serve's log; a server still
 * down is said again only when its reason changes. Silence is no fault: a
 * connected console that says nothing is just waited on.
 *
 * The inventory is read again when it changes (at most once a second): a
 * machine whose console key changed is reconnected, one that lost it is
 * closed. A bad inventory keeps the consoles read before, and says why.
 *
 * Each reader's state (connected, silent, reconnecting and why, its boot and
 * its floods) is kept in DATA/consoles/<machine>/state (console_state.h) for
 * `schedule machines` and the JSON routes, which read it without serve.
 */
#ifndef BCI_SERVE_CONSOLE_H
#define BCI_SERVE_CONSOLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bci_consoles;

/*
 * Starts the reader thread on @data_dir's inventory (none yet is fine: it is
 * looked for again each second). @boot_max: each boot's limit (0: the
 * default); @silent: the seconds without a byte after which a connected
 * console is said silent in its state file (console_state.h; 0: the
 * default); @log, under @log_lock, for its lines.
 */
int bci_consoles_start(const char *data_dir, uint64_t boot_max, unsigned silent, FILE *log,
		       pthread_mutex_t *log_lock, struct bci_consoles **out, char *err,
		       size_t err_size);
/* Stops the thread, writes out and syncs every console's file. NULL is fine. */
void bci_consoles_stop(struct bci_consoles *consoles);

/*
 * Says in @machine's console, where its stream is now, that the job of run
 * @run_id was handed out (its job initrd served: the firmware is netbooting
 * it): the boot this lands in is that run's (console_log.h's run note). From
 * any thread: the note is queued for the readers' thread. A machine whose
 * console is not read: nothing. @cs NULL: nothing.
 */
void bci_consoles_run_served(struct bci_consoles *consoles, const char *machine, const char *run_id);
/*
 * Says in @machine's console that the master itself powered it (@action: on,
 * off or cycle; @how: the driver's line): a new boot starts there
 * (console_log.h's power note). From any thread, as bci_consoles_run_served().
 */
void bci_consoles_power_done(struct bci_consoles *consoles, const char *machine, const char *action,
			     const char *how);

#endif

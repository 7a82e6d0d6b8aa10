/* SPDX-License-Identifier: MIT */
/*
 * A machine's serial console as the master keeps it, one file per boot: the
 * writer that console.c feeds with the bytes it reads, and the reader that
 * the console routes serve, side by side.
 *
 *   DATA/consoles/<machine>/000001.log    boot 1's bytes, as read
 *   DATA/consoles/<machine>/000002.log    boot 2's ...
 *
 * Boot numbers count up from 1 per machine, six digits; the highest is the
 * boot being written, and a restarted serve appends to it. The bytes are the
 * console's, unchanged, but for serve's own notes, each on a line of its own:
 *
 *   == bootci-serve: <what happened> ==
 *
 * (reader connected or lost, serve started, this boot cut at its limit, bytes
 * dropped). A note that comes in the middle of a console line starts a new
 * line: the console's line goes on after it.
 *
 * Where a boot starts: at a line that holds, in its first
 * BCI_CONSOLE_MARKER_WINDOW bytes, the firmware's console reset (OVMF clears
 * the screen and sets its mode with ESC [ = 3 h at every power on and reset;
 * inside a line, which a reset may cut short, its whole sequence
 * ESC [ 2 J ESC [ 0 1 ; 0 1 H ESC [ = 3 h, and the boot starts at its first
 * escape) or the kernel's first line
 * ("Linux version ", after printk's "[ time] " if any). A kernel line right after the firmware's is the same boot; a second
 * kernel line in a boot (a kexec, a kernel started without firmware output)
 * or the firmware's reset after at least one other line starts a new one.
 * A run note (BCI_CONSOLE_RUN_NOTE) says the machine is netbooting: after a
 * kernel it starts a new boot, and the kernel that follows it is that boot's,
 * even when the boot's start was not seen (serve connected after the
 * firmware's reset, or the firmware sends none): the run's boot holds its
 * kernel's console. A power note (BCI_CONSOLE_POWER_NOTE) says the master
 * itself powered the machine (recovery's power cycle): it starts a new boot
 * (when the current one holds anything), and the firmware's reset and the
 * kernel that follow it are that boot's.
 *
 * Storage is bounded per boot, and a flood keeps what a crash leaves last:
 * past three quarters of @boot_max bytes of the console's (the head), a note
 * says the boot is cut, and what follows goes to NNNNNN.tail-K, segments of an
 * eighth of @boot_max taking turns (the one before the previous is dropped,
 * counted). At the boot's end the last two segments are appended after a note
 * saying how many bytes were dropped there, and removed: the boot's file is its
 * head, the notes, and its last bytes (an eighth to a quarter of @boot_max).
 * Segments a stopped serve left are appended when it starts again. Silence
 * costs nothing.
 *
 * Durability: bytes are written as they are read (a crash of serve loses
 * nothing it has read) and fdatasync'ed at a boot's end, at each note, and
 * by bci_console_log_tick() at most a second after they were written; a
 * tail segment dropped before that sync was never synced (a flood's
 * dropped middle costs no disk writes).
 */
#ifndef BCI_SERVE_CONSOLE_LOG_H
#define BCI_SERVE_CONSOLE_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define BCI_CONSOLE_DIR "consoles"
#define BCI_CONSOLE_MARKER_WINDOW 64
#define BCI_CONSOLE_BOOT_MAX_DEFAULT (16ULL << 20)
#define BCI_CONSOLE_NOTE_PREFIX "== bootci-serve: "
#define BCI_CONSOLE_MACHINE_MAX 128
/*
 * The note that ties a boot to a run: "== bootci-serve: netboot of run RUN
 * (...) ==", written when serve hands the machine that run's job initrd.
 */
#define BCI_CONSOLE_RUN_NOTE "netboot of run "
/* The note of the master's own power action: "== bootci-serve: power ACTION by the master (...) ==". */
#define BCI_CONSOLE_POWER_NOTE "power "

/* DATA/consoles/<machine> into @out (@size bytes); -ENAMETOOLONG when it does not fit. */
int bci_consoles_dir(const char *data_dir, const char *machine, char *out, size_t size);

struct bci_console_log;

/*
 * Opens the console folder @dir (made if absent) of machine @machine (for the
 * log's lines). @log: where cuts and drops are said (NULL: nowhere); the caller
 * serializes writes to it with @log_lock (NULL: none). The first byte or note
 * goes to the highest boot already there, or to boot 1.
 */
int bci_console_log_open(const char *dir, const char *machine, uint64_t boot_max, FILE *log,
			 pthread_mutex_t *log_lock, struct bci_console_log **out, char *err,
			 size_t err_size);
/* Appends @len bytes read from the console, cutting boots where they start. 0 or -errno. */
int bci_console_log_feed(struct bci_console_log *c, const void *data, size_t len, double now);
/* Appends a note (one line, formatted, no newline) at the end of the current boot. */
int bci_console_log_note(struct bci_console_log *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * At least once a second (@now: CLOCK_MONOTONIC seconds): writes out a line
 * start held to find a marker when nothing came for half a second, and
 * fdatasyncs what was written since the last sync.
 */
int bci_console_log_tick(struct bci_console_log *c, double now);
/* The boot being written (0 before the first byte). */
unsigned bci_console_log_boot(const struct bci_console_log *c);

struct bci_console_log_status {
	unsigned boot;			/* as bci_console_log_boot() */
	bool flooding;			/* it passed its head: its middle is being dropped */
	unsigned flooded_boots;		/* boots that passed their head since open */
	unsigned last_flooded_boot;	/* the latest of them (0: none) */
	uint64_t last_dropped;		/* its bytes dropped (so far, while it floods) */
};
/* Where the writer stands: the boot, and the floods since it was opened. */
void bci_console_log_status(const struct bci_console_log *c, struct bci_console_log_status *out);
/* Writes out what is held, syncs, closes. */
void bci_console_log_close(struct bci_console_log *c);

/* ---- the reader ---- */

struct bci_console_boot {
	unsigned number;
	uint64_t size;
	time_t modified;		/* its last byte's time */
};

/*
 * The boots kept in @dir, by number (*@out malloc'ed; 0 boots when the folder
 * does not exist). 0 or -errno.
 */
int bci_console_log_list(const char *dir, struct bci_console_boot **out, size_t *count);
/* Opens boot @number of @dir for reading: a file descriptor, -ENOENT, or -errno. */
int bci_console_log_open_boot(const char *dir, unsigned number);

/*
 * The job in flight when a boot's console ends, from the executor's progress
 * lines (lib/progress_marker.h): a job's start is its kernel log marker
 * `[bootci] [N/M] NAME`, its end the console line `bootci: [N/M] NAME RESULT
 * ...`, which may come after the next job's start. The job in flight is the
 * last started one without an end after its start: at a crash, a hang or a
 * reset, the test that was running, and the console from its start is its tail.
 */
#define BCI_CONSOLE_TAIL_MAX (64u << 10)

struct bci_console_in_flight {
	unsigned index, total;		/* N/M */
	char name[512];			/* NAME as the marker says it (a resumed job's note too) */
	uint64_t start;			/* the offset of its marker's line in the boot's file */
};

/*
 * Scans boot @fd (read from its end). 1 with @out filled when a job was in
 * flight at its end, 0 when none was, -errno.
 */
int bci_console_log_in_flight(int fd, struct bci_console_in_flight *out);

#define BCI_CONSOLE_RUN_MAX 128
/*
 * The run boot @fd netbooted (its run note, in its first BCI_CONSOLE_RUN_SCAN
 * bytes: the firmware's and iPXE's output before the kernel). 1 with
 * @run_id, 0 when it has none (a known-good boot), -errno.
 */
#define BCI_CONSOLE_RUN_SCAN (256u << 10)
int bci_console_log_run(int fd, char run_id[BCI_CONSOLE_RUN_MAX + 1]);
/*
 * The same, and the run's boot number the executor said in that head
 * (executor/boot_record.c, after its kernel's log: a line ending
 * `bootci: boot N of the run; previous boot: ...`) in *@boot, 0 when it
 * did not say one there (the boot died before, or a known-good boot).
 */
#define BCI_CONSOLE_BOOT_LINE "bootci: boot "
#define BCI_CONSOLE_BOOT_LINE_END " of the run;"
int bci_console_log_run_boot(int fd, char run_id[BCI_CONSOLE_RUN_MAX + 1], unsigned *boot);

#endif

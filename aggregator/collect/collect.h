/* SPDX-License-Identifier: MIT */
/*
 * bootci-collect: the known-good image's half of getting every
 * byte home. For each run on the results partition that is over (finished,
 * capped or superseded) and not yet uploaded: one tar.zst archive of the run
 * folder with its manifest.json, uploaded to the CI master with the machine's
 * token, resumed from what the master confirmed after any interruption, and
 * marked uploaded only when the master answers with the archive's digest.
 *
 * On the results partition (RESULTS is where it is mounted, /results):
 *
 *   RESULTS/bootci-machine.conf    the machine's identity and upload token, written
 *                                  at provisioning, mode 0600 (never in the image):
 *                                      machine = <name>
 *                                      token = <secret>
 *                                      master = <URL>   optional: the master it was
 *                                      keep = N         enrolled with, and this
 *                                      deadline = D     machine's own settings
 *   RESULTS/runs/<run>/            run folders (the executor's)
 *   RESULTS/runs/<run>/bootci-uploaded.txt
 *                                  written (atomically) once the master confirmed the
 *                                  archive: "sha256 <hex>\nsize <bytes>\ntime <unix>\n"
 *   RESULTS/runs/<run>/bootci-ended.txt
 *                                  written (atomically, before the archive) when the run
 *                                  is in progress here but the master ended it (its boot
 *                                  cap): "ended-by master\nboots <N>\nnote <its verdict>\n";
 *                                  the run is over from then on and uploads as it is
 *                                  (incomplete: whatever had not finished never will)
 *   RESULTS/outgoing/<run>.tar.zst the archive being uploaded, kept across boots so an
 *                                  interrupted upload resumes with the same bytes;
 *                                  <run>.sha256 beside it once it is complete
 */
#ifndef BCI_COLLECT_H
#define BCI_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BCI_COLLECT_MACHINE_FILE "bootci-machine.conf"
#define BCI_COLLECT_UPLOADED_FILE "bootci-uploaded.txt"
#define BCI_COLLECT_ENDED_FILE "bootci-ended.txt"
#define BCI_COLLECT_OUTGOING_DIR "outgoing"
#define BCI_SHA256_HEX 65

#include "config.h"

/* snprintf into a path buffer: -ENAMETOOLONG instead of a truncated path. */
int bci_collect_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- settings.c: collect's configuration and the machine file ---- */

/* Keys of /etc/bootci/collect.conf and `bootci_collect.<key>=` on the kernel command line. */
extern const struct bci_config_key bci_collect_keys[];

struct bci_collect_machine {
	char name[128];
	char token[256];
	/* Optional per-machine settings ("" when absent): collect keys of the same name. */
	char master[1024], ca_file[1024], keep[32], deadline[32];
};

/*
 * Reads the machine file @path: `machine` and `token` keys, both required,
 * `master`, `ca_file`, `keep` and `deadline` optional (checked when applied); a file
 * readable by group or others is refused (the token is a secret).
 */
int bci_collect_machine_read(const char *path, struct bci_collect_machine *machine, char *err,
			     size_t err_size);

/* ---- runs.c: which runs are over, which are uploaded, retention ---- */

enum bci_collect_run_state {
	BCI_RUN_IN_PROGRESS,
	BCI_RUN_FINISHED,   /* done, or aborted, or the test program ended */
	BCI_RUN_SUPERSEDED, /* kept aside by the executor: another image took the run id */
	BCI_RUN_ENDED,      /* in progress here, ended by the master (bootci-ended.txt) */
};

struct bci_collect_run {
	char name[256];
	enum bci_collect_run_state state;
	bool uploaded;
	long long uploaded_at; /* unix time, when uploaded */
};

/* The runs under @runs_dir, sorted by name; *@runs owned by the caller (free()). */
int bci_collect_runs_list(const char *runs_dir, struct bci_collect_run **runs, size_t *count,
			  char *err, size_t err_size);
const char *bci_collect_run_state_name(enum bci_collect_run_state state);
/* Writes RUN/bootci-ended.txt atomically: the master ended the run after @boots boots. */
int bci_collect_run_mark_ended(const char *run_dir, int boots, const char *note);
/* Writes RUN/bootci-uploaded.txt atomically. */
int bci_collect_run_mark_uploaded(const char *run_dir, const char *sha256, uint64_t size,
				  long long now);
/*
 * Deletes the uploaded runs beyond the newest @keep (by upload time); never a
 * run that is not marked uploaded. Returns how many were deleted, or -errno.
 */
int bci_collect_runs_retain(const char *runs_dir, unsigned long keep, FILE *log);

/* ---- efi_entries.c: the firmware's boot entries (lib/efi) ---- */

struct bci_manifest;
/*
 * Fills @m's efi members (BootCurrent, BootOrder, every Boot#### entry by
 * number) from the EFI variables under @root ("" on the machine, a fake
 * tree in tests). Returns 0, or -ENODEV when there are no EFI variables
 * (nothing set).
 */
int bci_collect_efi_entries(const char *root, struct bci_manifest *m);
/* The same for the running machine: the run archive writer's efi_read. */
int bci_collect_efi_read(struct bci_manifest *m);

/* ---- upload.c: HTTP(S) with resume, backoff and progress ---- */

struct bci_collect_upload {
	const char *url;      /* MASTER/api/v1/machines/<machine>/runs/<run> */
	const char *token;
	const char *ca_file;  /* CA certificates for an https master; NULL or "": libcurl's default
			       * (/etc/ssl/certs/ca-certificates.crt, builder/setup/sysroot.sh) */
	const char *path;     /* the archive */
	const char *sha256;
	uint64_t size;
	long long deadline;   /* CLOCK_MONOTONIC seconds: no attempt starts after it */
	uint64_t max_rate;    /* bytes per second, 0: no limit */
	FILE *console;        /* progress lines */
};

/*
 * Uploads until the master answers with the same digest (0), the deadline
 * passes or the master refuses for good (-errno, message in @err).
 */
int bci_collect_upload_run(const struct bci_collect_upload *upload, char *err, size_t err_size);

/* What the master's answer to GET of a run says, for a run of @size bytes with digest @sha256. */
enum bci_collect_master_state {
	BCI_MASTER_SEND,     /* send from *@received on (0: from the start) */
	BCI_MASTER_HOLDS,    /* stored, with our digest: done */
	BCI_MASTER_CONFLICT, /* stored with another digest: refused for good */
	BCI_MASTER_UNCLEAR,  /* an answer that says nothing usable: try again later */
};

/* The run's job as the master's answer to GET of the run gives it ("job": ...). */
struct bci_collect_master_job {
	bool ended;           /* the master will not hand the run out again: it is over */
	int boots;            /* how many times the master handed it out */
	char note[512];       /* the master's verdict, or "" */
};
/*
 * Reads the "job" member of the JSON @body of GET's answer (200 or 404): 1
 * with @job filled, 0 when the answer has none (no such job, or an older
 * master), -EINVAL when it is not a usable answer.
 */
int bci_collect_master_job_parse(const char *body, size_t len, struct bci_collect_master_job *job);
/*
 * Asks the master (GET @u->url, once, no retries) about a run in progress
 * here: 1 with @job when the master has a job for it, 0 when not, -errno
 * (@err) when it could not be asked.
 */
int bci_collect_master_job(const struct bci_collect_upload *u, struct bci_collect_master_job *job,
			   char *err, size_t err_size);

/*
 * Reads the JSON @body of a 200 answer ({"state": "absent"|"partial"|"stored",
 * "received": N, "sha256": HEX}). A partial upload of other bytes, or one
 * longer than ours, is started over (*@received = 0). @err says what was wrong
 * with an UNCLEAR or CONFLICT answer.
 */
enum bci_collect_master_state bci_collect_master_state_parse(const char *body, size_t len,
							     const char *sha256, uint64_t size,
							     uint64_t *received, char *err,
							     size_t err_size);

/*
 * command.c: the whole program (main.c only calls it). Settings, then every
 * run that is over archived and uploaded. Exit status: 0 every run that is
 * over is uploaded (or there was none), 1 some stay on the partition
 * (message on the console), 2 usage.
 */
int bci_collect_command(int argc, char **argv);

/* Monotonic seconds (the deadline's clock). */
long long bci_collect_now(void);

#endif

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
 *                                  archive: "sha256 <hex>\nsize <bytes>\ntime <unix>\n";
 *                                  time 0 when the run was recognised as the one the
 *                                  master holds after this file was lost (a deletion
 *                                  cut short by an older collect): the oldest upload
 *   RESULTS/runs/<run>/bootci-refused.txt
 *                                  written when the master holds another run under this
 *                                  run id (a file here it does not have): "sha256 <ours>\n
 *                                  master_sha256 <its>\ntime <unix>\nreason <text>\n"; the
 *                                  run then stays, never uploaded again until a person
 *                                  removes this file
 *   RESULTS/runs/.deleting-<run>/  a run being deleted (renamed first, then removed)
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
#define BCI_COLLECT_REFUSED_FILE "bootci-refused.txt"
#define BCI_COLLECT_ENDED_FILE "bootci-ended.txt"
#define BCI_COLLECT_OUTGOING_DIR "outgoing"
#define BCI_SHA256_HEX 65

#include "config.h"

struct bci_manifest;

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
	BCI_RUN_LEFT_BEHIND, /* never began (no journal, no result.txt), a later run booted */
	BCI_RUN_ENDED,      /* in progress here, ended by the master (bootci-ended.txt) */
};

struct bci_collect_run {
	char name[256];
	enum bci_collect_run_state state;
	bool began;		/* a journal or a result.txt: the run's engine started */
	bool uploaded;
	bool refused;		/* bootci-refused.txt: the master holds another run of this id */
	long long uploaded_at;	/* unix time, when uploaded */
	long long last_boot;	/* unix time of its newest boot-NNNN/ folder, 0: none */
};

/* The runs under @runs_dir, sorted by name; *@runs owned by the caller (free()). */
int bci_collect_runs_list(const char *runs_dir, struct bci_collect_run **runs, size_t *count,
			  char *err, size_t err_size);
const char *bci_collect_run_state_name(enum bci_collect_run_state state);
/*
 * Settles what the listing alone cannot: a run that never began is left
 * behind (BCI_RUN_LEFT_BEHIND) when another run, not @ignored (the known-good
 * image's own run folder boots every time), booted after its last boot.
 */
void bci_collect_runs_settle(struct bci_collect_run *runs, size_t count,
			     bool (*ignored)(const char *name, void *ctx), void *ctx);
/* Writes RUN/bootci-refused.txt atomically: our digest, the master's, why. */
int bci_collect_run_mark_refused(const char *run_dir, const char *why, const char *sha256,
				 const char *master_sha256, long long now);
/* Writes RUN/bootci-ended.txt atomically: the master ended the run after @boots boots. */
int bci_collect_run_mark_ended(const char *run_dir, int boots, const char *note);
/* Writes RUN/bootci-uploaded.txt atomically. */
int bci_collect_run_mark_uploaded(const char *run_dir, const char *sha256, uint64_t size,
				  long long now);
/*
 * Deletes the uploaded runs beyond the newest @keep (by upload time); never a
 * run that is not marked uploaded. Each goes whole or not at all (renamed to
 * .deleting-<run> first); what an interrupted deletion left is removed
 * first. Returns how many were deleted, or -errno.
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
/* The same for the running machine (or the root set below): the run archive writer's efi_read. */
int bci_collect_efi_read(struct bci_manifest *m);
/* Where bci_collect_efi_read() reads (@root borrowed until the program ends; "" the machine). */
void bci_collect_efi_root_set(const char *root);

/* ---- fault.c: the boot fault note (lib/boot_fault.h) to the master ---- */

struct bci_collect_upload;
/*
 * When the executor's boot fault note is due (boots in a row that ended
 * before their run began reached its cap), sends it to the master
 * (@report's URL, MASTER/api/v1/machines/<machine>/fault) and removes it once
 * the master has it. Says what it did on @console. 1 when the master took
 * the note (and with it the machine out of its schedule), 0 when there was
 * no note to send, -errno when the note stays for the next boot.
 */
int bci_collect_fault_report(const char *root, const struct bci_collect_upload *report,
			     FILE *console);

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
 * passes (-ETIMEDOUT), the master holds the run under another digest
 * (-EEXIST) or refuses for good (-EPERM); the message in @err.
 */
int bci_collect_upload_run(const struct bci_collect_upload *upload, char *err, size_t err_size);

/* The largest manifest collect reads from the master (the run archive's own limit). */
#define BCI_COLLECT_MANIFEST_MAX ((size_t)64 << 20)

/* What the master holds of a run: its archive's digest and size, and its manifest. */
struct bci_collect_held {
	char sha256[BCI_SHA256_HEX];
	uint64_t size;
	struct bci_manifest *manifest;	/* the caller's: bci_manifest_free() */
};

/*
 * Asks the master at @upload's URL (the run's) what it holds of the run:
 * GET URL, then GET URL/manifest. 0, or -errno with @err saying why (not
 * stored, unreachable, a manifest that does not parse).
 */
int bci_collect_master_held(const struct bci_collect_upload *upload, struct bci_collect_held *held,
			    char *err, size_t err_size);

/*
 * Whether the run folder whose manifest is @local is the run the master holds
 * (@held), as a deletion cut short leaves it: the same machine and run id, and
 * every file of @local in @held with the same size and sha256 (files of
 * @held may be missing here). 1 yes, 0 no with @why naming the first file
 * that is not the master's.
 */
int bci_collect_run_recognise(const struct bci_manifest *held, const struct bci_manifest *local,
			      char *why, size_t why_size);

/* The master's answer to a hello: whether it holds the machine out of its schedule. */
struct bci_collect_hello {
	char state[16];		/* ready, out, or unscheduled (no scheduler, not in its inventory) */
	bool out;
	char note[256];		/* why it is out (one line), or "" */
};
/* Reads the master's JSON answer to a hello. 0, or -EPROTO with @err naming what is wrong. */
int bci_collect_hello_parse(const char *body, size_t len, struct bci_collect_hello *hello,
			    char *err, size_t err_size);
/*
 * PUT (no body) to @upload's URL, MASTER/api/v1/machines/<machine>/hello:
 * the known-good image started (the master then knows the disk boots, even
 * when the kernel under test died before it made a run folder). 0 with
 * @hello, -ENOENT when the master has no such route (an older master), -errno.
 */
int bci_collect_hello(const struct bci_collect_upload *upload, struct bci_collect_hello *hello,
		      char *err, size_t err_size);

/*
 * PUT @note (one line of text) to @upload's URL, MASTER/api/v1/machines/<machine>/fault:
 * the machine says it cannot run its jobs. 0 once the master answered 200, -errno (@err).
 */
int bci_collect_report_fault(const struct bci_collect_upload *upload, const char *note, char *err,
			     size_t err_size);

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

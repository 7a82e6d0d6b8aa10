/* SPDX-License-Identifier: MIT */
/*
 * The master runs the lab: which machine boots what, decided from the
 * inventory (inventory.h) and the store's queue (store.h, "the scheduler").
 *
 * A build's tiers: its fast tier (the build's fast.testlist) is queued on
 * every machine in the schedule; its full tier (full.testlist) once the fast
 * tier is done and the judge found no possible new issue (the tree's rule
 * may say always or never instead). Possible new issues are first run again
 * (confirm.c): the inventory's reruns times each, on the machine and on
 * another of its shard group, as jobs of only those tests handed out before
 * any tier's; the gate waits for them up to the inventory's rerun-budget (a
 * share of the fast tier's time), then abandons those not back and judges
 * again, the reruns counted. A tree whose rule says always or never has them
 * too, its decision (which the reply waits for) recorded after them; always
 * still queues its full tier with the fast tier. On a shard group the full
 * testlist is split by past durations (split.h); the split is recorded, so
 * queueing the same build's tier again gives the same shards.
 *
 * Netboot: every machine's firmware chains to GET /api/v1/boot/<mac>, and
 * bci_schedule_boot() answers an iPXE script: its next job (the build's
 * vmlinuz and initrd.img, plus a small initrd the master makes holding the
 * shard's testlist at BCI_SCHEDULE_TESTLIST_PATH, the command line carrying
 * bootci.run_id= and bootci.testlist=), or `exit` so the firmware falls
 * through to the disk's known-good image (nothing queued, an unknown MAC, a
 * machine taken out). A build whose image's command line names a test=
 * program runs that program instead (no bootci.testlist=). A job handed out
 * and not yet uploaded is handed out again (the executor resumes its run
 * after a crash reboot); each answer counts as one of the job's boots. The
 * executor caps what a kernel that crashes at every boot can cost (boot_cap:
 * a test= program after 3 crashed boots, each IGT job after 3); past
 * BCI_SCHEDULE_MAX_BOOTS boots the master ends the run itself (the job
 * abandoned, its note saying so) and answers `exit`: the known-good image's
 * collect asks about the run, learns it was ended and uploads what there is.
 * The next netboot judges the disk: no word from its known-good image (no
 * upload, no question) means it does not boot, and it is re-deployed.
 *
 * A run that came in gets its verdict in its job's note: a kernel that took
 * the machine down at every boot of the run is named as the fault, never the
 * disk.
 *
 * Recovery: bci_schedule_tick() power cycles a machine silent (no job asked
 * for, no run uploaded) past its deadline with its power driver (power.h),
 * and takes it out of the schedule after the inventory's power-cycles cycles
 * that did not bring it back, or at once when its BMC does not answer or
 * refuses; bci_schedule_return() puts it back and powers it on. A machine
 * taken out (so, too, by its fault note or a re-deploy given up) hands each
 * of its confirm and bisect jobs not ended to the machine of its shard group
 * in the schedule with the fewest queued, or abandons it when there is none
 * (take_out.c).
 *
 * One struct bci_schedule is used by one thread at a time (its store is).
 *
 * The files, by role (each calls only those below it; internal.h is what
 * they share):
 *
 *   tick.c           one turn of the loop: gate.c, then recovery.c
 *   gate.c           the full tier's gate (the judge: judge.h)
 *   confirm.c        the reruns of a fast tier's possible new issues
 *   boot.c           the netboot answer and the job's initrd (job_initrd.h)
 *   deploy.c         re-deploying a damaged disk (deploy.h)
 *   queue.c          queueing a tier, its shards (split.h)
 *   recovery.c       power cycling the silent, taking out the dead
 *   power.c          the power drivers: commands, IPMI (power.h)
 *   fault.c          taking out a machine that says it cannot run its jobs
 *   take_out.c       every take-out: the state, the jobs others wait on moved
 *   runs.c           a run that came in: its job's build, its job done
 *   tags.c           the inventory's tags onto the store's machines
 *   build_files.c    a published build's files, boot.ipxe's command line
 *   machine_state.c  a machine's stored state, whether its run came in
 *   log.c            the decision log
 *   command.c        `bootci-aggregator schedule`
 *   serve_hook.c     the routes and the loop inside serve (serve_hook.h;
 *                    route.c parses the paths, publish_http.c takes builds)
 */
#ifndef BCI_SCHEDULE_H
#define BCI_SCHEDULE_H

#include "inventory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bci_store;

/*
 * The master's boot cap of one job. Above what the executor's own caps let
 * a run take in the usual cases (a test= program capped at boot_cap 3 takes
 * 4 boots, an IGT run whose two jobs each crash at start 7), so that the
 * machine ends its run itself and the master ends only what the machine
 * could not (a kernel that dies before the executor runs, a long run that
 * crashes job after job).
 */
#define BCI_SCHEDULE_MAX_BOOTS 10
/* A tier queued again gets run ids ending -r2, -r3 ... up to this many times. */
#define BCI_SCHEDULE_MAX_RERUNS 50
/* Where the job initrd puts the shard's testlist (the executor's testlist= key). */
#define BCI_SCHEDULE_TESTLIST_PATH "etc/bootci/job.testlist"
/* The build files the tiers read (published with the build). */
#define BCI_SCHEDULE_FAST_TESTLIST "fast.testlist"
#define BCI_SCHEDULE_FULL_TESTLIST "full.testlist"

/* A possible new issue the judge found: a test and the machine it regressed on. */
struct bci_schedule_issue {
	char *test, *machine;
};

struct bci_schedule_issues {
	struct bci_schedule_issue *v;
	size_t n;
};

/* Adds (@test, @machine) to @issues (copied): 0 or -ENOMEM. */
int bci_schedule_issues_add(struct bci_schedule_issues *issues, const char *test,
			    const char *machine);
void bci_schedule_issues_free(struct bci_schedule_issues *issues);

/*
 * Does @build's fast tier show possible new issues? Their count (0: none),
 * each added to @issues unless it is NULL, or -errno on error (@err). The
 * report's judgement plugs in here (its reruns counted: a rerun that passed
 * makes a flake of it); NULL means "no judge yet": a gated full tier then
 * waits (nothing is queued on a guess).
 */
typedef int (*bci_schedule_judge_fn)(struct bci_store *store, const char *build, void *ctx,
				     struct bci_schedule_issues *issues, char *err,
				     size_t err_size);

struct bci_schedule {
	struct bci_store *store;		/* borrowed */
	const struct bci_inventory *inventory;	/* borrowed */
	const char *data_dir;			/* where build files are kept (builds/objects/) */
	bci_schedule_judge_fn judge;
	void *judge_ctx;
	FILE *log;				/* one line per decision; NULL: none */
	/* Told after each power action the master took on a machine (serve's console cut); NULL: none. */
	void (*power_done)(void *ctx, const char *machine, const char *action, const char *how);
	void *power_ctx;
};

/*
 * Queues @tier ("fast" or "full") of @build on every machine in the
 * schedule, its testlist read from the build's files. Returns the number of
 * jobs queued, or -errno (@err). Queueing a tier again is a re-run: the same
 * shards (the recorded split), run ids ending -r2, -r3 ...
 */
int bci_schedule_queue(struct bci_schedule *s, const char *build, const char *tier, char *err,
		       size_t err_size);

/*
 * Queues the reruns of @build's possible new issues @issues (confirm.c):
 * for each shard group (or machine without one) the union of its issues'
 * tests, s->inventory->reruns jobs of only them on each machine where they
 * appeared and, when that is one machine, on another of its group in the
 * schedule. Run ids BUILD-confirm-K. Returns the jobs queued (0: reruns = 0,
 * or no machine to run them), -EEXIST when @build has reruns already.
 */
int bci_schedule_confirm_queue(struct bci_schedule *s, const char *build,
			       const struct bci_schedule_issues *issues, char *err,
			       size_t err_size);

struct bci_strv;

/* Reads @build's published file @name (malloc'ed): 0, -ENOENT when the build has none. */
int bci_schedule_build_file_read(struct bci_schedule *s, const char *build, const char *name,
				 char **text, size_t *len, char *err, size_t err_size);

/*
 * Queues a bisection step's runs on candidate build @build (confirm.c):
 * @runs jobs of kind bisect, each in turn on one of @machines in the
 * schedule with a testlist (@testlists[i] is machine i's, NULL or "": none;
 * those out are passed over), run ids BUILD-bisect-J, handed out before any
 * tier's jobs. Returns the jobs queued: 0 when no machine can run them.
 */
int bci_schedule_bisect_queue(struct bci_schedule *s, const char *build,
			      const struct bci_strv *machines, const char *const *testlists,
			      unsigned runs, char *err, size_t err_size);

/*
 * The iPXE script for the machine of @mac asking for a job at Unix time
 * @now; URLs start with @base_url (http://master:port, no trailing '/').
 * 0 with a malloc'ed script in *@script, or -errno (@err).
 */
int bci_schedule_boot(struct bci_schedule *s, const char *mac, const char *base_url, double now,
		      char **script, char *err, size_t err_size);

/*
 * The initrd (newc cpio) of job @run_id of @machine: its testlist at
 * BCI_SCHEDULE_TESTLIST_PATH. 0 with a malloc'ed archive, -ENOENT when the
 * machine has no such job.
 */
int bci_schedule_job_initrd(struct bci_schedule *s, const char *machine, const char *run_id,
			    char **data, size_t *len, char *err, size_t err_size);

/*
 * One turn of the master's loop at Unix time @now: jobs whose run was
 * uploaded are done; a build whose fast tier is done gets its full tier
 * decided; silent machines are power cycled or taken out. 0 or -errno.
 */
int bci_schedule_tick(struct bci_schedule *s, double now, char *err, size_t err_size);

/*
 * Puts @machine (a name of the inventory) back in the schedule at Unix time
 * @now, as a person does once a machine taken out is repaired: state ready,
 * its power cycles forgotten, its deadline counted from @now, so it gets its
 * queued jobs at its next boot. 1 when it was out, 0 when it was in already,
 * -ENOENT when the inventory has no such machine, -errno (@err).
 */
int bci_schedule_return(struct bci_schedule *s, const char *machine, double now, char *err,
			size_t err_size);

/*
 * Takes power @action ("on", "off", "cycle", "status") on @machine (a name of
 * the inventory) with its power driver (power.h), as a person does by hand,
 * and says what it read back on the log; its state in the schedule is left
 * as it is. 0, -ENOENT (no such machine), -EINVAL (no such action), -ENOTSUP
 * (no driver, or none for @action), -EIO (the driver's fault), all with @err.
 */
int bci_schedule_power(struct bci_schedule *s, const char *machine, const char *action, char *err,
		       size_t err_size);

/*
 * @machine (a name of the inventory) says it cannot run its jobs (@note, one
 * line: serve's PUT /api/v1/machines/<machine>/fault): it is taken out of the
 * schedule at Unix time @now, "the machine reported: <note>" its state's note,
 * until bci_schedule_return(). 1 when it was in, 0 when it was out already
 * (the note replaced), -ENOENT when the inventory has no such machine, -errno.
 */
int bci_schedule_fault(struct bci_schedule *s, const char *machine, const char *note, double now,
		       char *err, size_t err_size);

/* What a machine's hello is answered (bci_schedule_hello()). */
struct bci_schedule_hello {
	bool known;		/* in the inventory */
	bool out;		/* taken out of the schedule */
	char note[256];		/* why it is out, or "" */
	int ended_runs;		/* runs ended by the master that this hello vouches for */
};
/*
 * @machine's known-good image started (its collect's PUT .../hello) at Unix
 * time @now: each run the master ended (its boot cap) and sent the machine
 * to that image for counts as asked about, so the next netboot knows the disk
 * boots and blames the kernel, even one that died before it made a run
 * folder (collect had nothing to ask about). @hello says whether the machine
 * is out and why. 0, -ENOENT when the inventory has no such machine, -errno.
 */
int bci_schedule_hello(struct bci_schedule *s, const char *machine, double now,
		       struct bci_schedule_hello *hello, char *err, size_t err_size);

/*
 * The inventory's tags and shard groups onto the store's machines (the
 * matrix and the filters go by the tags; the report reads a test's baseline
 * on every machine of its group): each machine of s->inventory gets every
 * tag it lists and its shard group; a tag or group @before (the inventory
 * read before, NULL at the first read) gave a machine and s->inventory no
 * longer does is removed. Tags and groups given otherwise (`machine tag`,
 * `machine group`) stay. serve calls it at each (re)read of the inventory.
 * 0 or -errno.
 */
int bci_schedule_tags_sync(struct bci_schedule *s, const struct bci_inventory *before, char *err,
			   size_t err_size);

/*
 * The build of run @run_id of @machine when the scheduler handed it out (a
 * job's run id): 1 with its name in @build, 0 when no job has that run id,
 * -errno. serve's ingest files an uploaded run under it, so the report and the
 * full tier's judge find the build's runs.
 */
int bci_schedule_run_build(struct bci_store *store, const char *machine, const char *run_id,
			   char *build, size_t size, char *err, size_t err_size);

/*
 * serve calls it once run @run_id of @machine is in the store: the job that
 * handed it out is done, and a full tier's run makes its build's tier full,
 * so the report and its reply say the results are the full tier's (the
 * subject's Fi.CI.FULL). 1 when a job had that run id, 0 when none, -errno.
 */
int bci_schedule_run_ingested(struct bci_store *store, const char *machine, const char *run_id,
			      char *err, size_t err_size);

/*
 * The verdict on a run from its boots: @boots recorded, @down of them
 * without a clean end (a kernel crash, hang or reset). A kernel that took the
 * machine down at every boot (or every boot but the one that ended the run,
 * at least twice) is named so. 1 with the text in @buf, 0 when none went down
 * ("").
 */
int bci_schedule_boots_verdict(int boots, int down, char *buf, size_t size);
/* A job as collect's question about its run sees it (serve's GET of the run). */
struct bci_schedule_run_job {
	int64_t key;
	char state[16];		/* queued, booted, done, abandoned */
	int boots;		/* the netboot answers of the job */
	bool ended;		/* the master will not hand it out again: the run is over */
	char note[1024];	/* the master's verdict, or "" */
};
/*
 * Collect asks about run @run_id of @machine at Unix time @now (so its
 * known-good image boots: the next netboot does not blame the disk). 1 with
 * @job filled when a job has that run id, 0 when none, -errno.
 */
int bci_schedule_run_asked(struct bci_store *store, const char *machine, const char *run_id,
			   double now, struct bci_schedule_run_job *job, char *err, size_t err_size);
/* The content-addressed path of a build file: DATA/builds/objects/<sha256>. */
int bci_schedule_object_path(const char *data_dir, const char *sha256, char *path, size_t size);

#endif

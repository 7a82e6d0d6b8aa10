// SPDX-License-Identifier: MIT
/*
 * The answer to a machine's netboot (schedule.h): an iPXE script booting
 * its next job, the deploy job when its disk is damaged (deploy.h), or
 * `exit` to the disk's known-good image; and the job's own initrd, which
 * that script asks for next.
 *
 * Each answer of a job counts as one of its boots. A job booted
 * BCI_SCHEDULE_MAX_BOOTS times whose run never came is ended by the master:
 * the answer is `exit`, and the known-good image's collect, asking about the
 * run it finds in progress, learns that and uploads what there is. The next
 * netboot tells which failed: a run uploaded or asked about, or a hello from
 * collect (a kernel that died before it made a run folder leaves nothing to
 * ask about), means the disk boots (the kernel under test never finished the
 * run); no word at all from the known-good image means the disk does not
 * boot, and it is re-deployed.
 */
#include "deploy.h"
#include "internal.h"
#include "job_initrd.h"

#include "../store/store.h"
#include "manifest.h"
#include "message.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char exit_script[] = "#!ipxe\n# bootci: nothing to run: the disk's known-good image\nexit\n";

static int script_exit(char **script, const char *why)
{
	if (asprintf(script, "#!ipxe\n# bootci: %s: boot the disk's known-good image\nexit\n",
		     why) < 0)
		return -ENOMEM;
	return 0;
}

struct job_copy {
	int64_t key;
	char build[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	char tier[8];
	char state[16];
	int shard, shards, boots;
	char note[512];
	double ended, asked;
};

static int job_row(const struct bci_store_job *job, void *ctx)
{
	struct job_copy *c = ctx;

	c->key = job->key;
	snprintf(c->build, sizeof(c->build), "%s", job->build);
	snprintf(c->run_id, sizeof(c->run_id), "%s", job->run_id);
	snprintf(c->tier, sizeof(c->tier), "%s", job->tier);
	snprintf(c->state, sizeof(c->state), "%s", job->state);
	c->shard = job->shard;
	c->shards = job->shards;
	c->boots = job->boots;
	snprintf(c->note, sizeof(c->note), "%s", job->note ? job->note : "");
	c->ended = job->ended;
	c->asked = job->asked;
	return 0;
}

/* Does @cmdline name a test= program? Then the build's jobs run it, not the tier's testlist. */
static bool cmdline_names_test_program(const char *cmdline)
{
	static const char param[] = "bootci.test=";

	for (const char *p = strstr(cmdline, param); p; p = strstr(p + 1, param))
		if (p == cmdline || p[-1] == ' ')
			return true;
	return false;
}

static bool base_url_ok(const char *url)
{
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return false;
	for (const char *p = url; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr(".-:/[]", *p)))
			return false;
	return url[strlen(url) - 1] != '/';
}

static int script_job(struct bci_schedule *s, const char *machine, const struct job_copy *job,
		      const char *base_url, char **script)
{
	char cmdline[2048], shard[48] = "", testlist[64] = "";

	bci_schedule_build_cmdline(s, job->build, cmdline, sizeof(cmdline));
	/* A single-program build (its image's command line names bootci.test=): the executor
	 * runs that program, which a testlist on the command line would override. */
	if (!cmdline_names_test_program(cmdline))
		snprintf(testlist, sizeof(testlist), " bootci.testlist=/%s", BCI_SCHEDULE_TESTLIST_PATH);
	/*
	 * The job's cpio first: the EFI stub joins the initrd= files in that order,
	 * and the kernel unpacks an uncompressed archive followed by a compressed
	 * one, but stops after a zstd one with "invalid magic at start of
	 * compressed archive" (found in the lab: the testlist was never there).
	 */
	if (job->shards > 1)
		snprintf(shard, sizeof(shard), ", shard %d of %d", job->shard + 1, job->shards);
	if (asprintf(script,
		     "#!ipxe\n"
		     "# bootci: %s runs %s (build %s, %s tier%s)\n"
		     "kernel %s/api/v1/builds/%s/files/vmlinuz initrd=job.img initrd=initrd.img%s%s"
		     " bootci.run_id=%s%s\n"
		     "initrd --name job.img %s/api/v1/machines/%s/jobs/%s/initrd\n"
		     "initrd --name initrd.img %s/api/v1/builds/%s/files/initrd.img\n"
		     "boot\n",
		     machine, job->run_id, job->build, job->tier, shard, base_url, job->build,
		     cmdline[0] ? " " : "", cmdline, job->run_id, testlist, base_url,
		     machine, job->run_id, base_url, job->build) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * The machine came back to netboot without a word from its known-good image
 * after the master sent it there: the disk does not boot it. It is marked
 * damaged and re-deployed now. 1 with the deploy job's script, 0, -errno.
 */
static int disk_suspect(struct bci_schedule *s, const char *machine, const struct job_copy *job,
			const char *base_url, char **script, char *err, size_t err_size)
{
	char why[256];
	int ret;

	snprintf(why, sizeof(why), "the master ended %s after %d boots and sent the machine to its"
		 " known-good image, which neither uploaded nor asked about the run: the known-good"
		 " image does not start", job->run_id, job->boots);
	if ((ret = bci_schedule_redeploy(s, machine, why, err, err_size)) < 0)
		return ret;
	return bci_schedule_deploy_boot(s, machine, base_url, script, err, err_size);
}

/*
 * A job booted BCI_SCHEDULE_MAX_BOOTS times whose run never came: the master
 * ends the run (state abandoned, ended now, the note saying why) and sends
 * the machine to its known-good image, which uploads what there is.
 */
static int run_end(struct bci_schedule *s, const char *machine, const struct job_copy *job,
		   double now, char **script, char *err, size_t err_size)
{
	char note[512], why[256];
	int ret;

	snprintf(note, sizeof(note), "ended by the master after %d boots without an upload (its cap"
		 " is %d): the kernel under test never finished the run, a crash or hang at every"
		 " boot; the known-good image uploads what there is", job->boots,
		 BCI_SCHEDULE_MAX_BOOTS);
	ret = bci_store_job_end(s->store, job->key, "abandoned", note, now, err, err_size);
	if (ret < 0)
		return ret;
	bci_schedule_say(s, "boot: %s: %s ended after %d boots without an upload: the known-good"
			 " image uploads what there is", machine, job->run_id, job->boots);
	snprintf(why, sizeof(why), "run %s ended by the master after %d boots, upload what there is",
		 job->run_id, job->boots);
	return script_exit(script, why);
}

struct ended_jobs {
	struct job_copy jobs[4];
	size_t count;
};

static int ended_row(const struct bci_store_job *job, void *ctx)
{
	struct ended_jobs *e = ctx;

	if (strcmp(job->state, "abandoned") || job->ended <= 0 ||
	    e->count == sizeof(e->jobs) / sizeof(e->jobs[0]))
		return 0;
	return job_row(job, &e->jobs[e->count++]);
}

/*
 * The runs the master ended since the machine's last netboot, judged once:
 * uploaded (done), asked about by collect (the disk boots: the run comes when
 * it can), or neither (the disk does not boot: re-deployed, 1 with the
 * deploy's script). 0 to go on, -errno.
 */
static int ended_runs_judge(struct bci_schedule *s, const char *machine, const char *base_url,
			    char **script, char *err, size_t err_size)
{
	struct ended_jobs e = { .count = 0 };
	int ret = bci_store_machine_jobs_each(s->store, machine, ended_row, &e, err, err_size);

	for (size_t i = 0; ret >= 0 && i < e.count; i++) {
		struct job_copy *job = &e.jobs[i];
		bool asked = job->asked >= job->ended;
		int uploaded = bci_schedule_run_uploaded(s, machine, job->run_id, err, err_size);
		char note[1024];

		if (uploaded < 0)
			return uploaded;
		snprintf(note, sizeof(note), "%s%s", job->note, uploaded ? "" : asked ?
			 "; its known-good image spoke (asked about the run, or said hello): the"
			 " disk boots, the kernel under test did not; what the run has is uploaded"
			 " when it can be" :
			 "; the machine netbooted again without a word from its known-good image:"
			 " the disk is re-deployed");
		ret = bci_store_job_end(s->store, job->key, uploaded ? "done" : "abandoned", note, 0,
					err, err_size);
		if (ret < 0)
			return ret;
		if (uploaded || asked)
			continue;
		bci_schedule_say(s, "boot: %s: %s was ended and its known-good image never spoke:"
				 " the disk is re-deployed", machine, job->run_id);
		ret = disk_suspect(s, machine, job, base_url, script, err, err_size);
		return ret < 0 ? ret : 1;
	}
	return ret < 0 ? ret : 0;
}

int bci_schedule_boot(struct bci_schedule *s, const char *mac, const char *base_url, double now,
		      char **script, char *err, size_t err_size)
{
	const struct bci_inventory_machine *m = bci_inventory_by_mac(s->inventory, mac);
	struct bci_schedule_state state = { .state = "ready" };
	struct job_copy job;
	int ret;

	if (!base_url_ok(base_url)) {
		bci_message(err, err_size, "base URL '%s' is not http(s)://host[:port]", base_url);
		return -EINVAL;
	}
	if (!m) {
		bci_schedule_say(s, "boot: unknown MAC %s (not in %s): exit", mac, BCI_INVENTORY_FILE);
		return script_exit(script, "unknown machine");
	}
	if ((ret = bci_schedule_state_read(s, m->name, &state, err, err_size)) < 0)
		return ret;
	if (!strcmp(state.state, "out")) {
		bci_schedule_say(s, "boot: %s is out of the schedule (%s): exit", m->name, state.note);
		return script_exit(script, "out of the schedule");
	}
	/* Asking is a sign of life: the deadline starts again, past cycles are forgiven. */
	struct bci_store_machine_state fresh = {
		.machine = m->name, .state = "ready", .last_seen = now, .power_cycles = 0,
		.last_cycle = state.last_cycle,
	};
	if ((ret = bci_store_machine_state_put(s->store, &fresh, err, err_size)) < 0)
		return ret;
	/* A damaged disk is re-deployed before anything else runs on it (deploy.h). */
	if ((ret = bci_schedule_deploy_boot(s, m->name, base_url, script, err, err_size)) != 0)
		return ret < 0 ? ret : 0;
	if ((ret = ended_runs_judge(s, m->name, base_url, script, err, err_size)) != 0)
		return ret < 0 ? ret : 0;
	for (;;) {
		ret = bci_store_job_next(s->store, m->name, job_row, &job, err, err_size);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			bci_schedule_say(s, "boot: %s: nothing queued: exit", m->name);
			*script = strdup(exit_script);
			return *script ? 0 : -ENOMEM;
		}
		/* Its run is in (the tick may not have seen it yet): done, the next one. */
		ret = bci_schedule_run_uploaded(s, m->name, job.run_id, err, err_size);
		if (ret < 0)
			return ret;
		if (ret) {
			ret = bci_store_job_update(s->store, job.key, "done", job.boots, 0, err,
						   err_size);
			if (ret < 0)
				return ret;
			continue;
		}
		/* Handed out as often as the master allows: its run is over, with what it has. */
		if (!strcmp(job.state, "booted") && job.boots >= BCI_SCHEDULE_MAX_BOOTS)
			return run_end(s, m->name, &job, now, script, err, err_size);
		break;
	}
	ret = bci_store_job_update(s->store, job.key, "booted", job.boots + 1, now, err, err_size);
	if (ret < 0)
		return ret;
	/* The build's first job handed out (its latency's stages): the first boot's time stays. */
	if (!job.boots && (ret = bci_store_build_stage_put(s->store, job.build, BCI_STAGE_FIRST_BOOT,
							   now, 1, err, err_size)) < 0)
		return ret;
	bci_schedule_say(s, "boot: %s: %s (%s, boot %d)", m->name, job.run_id,
	    job.boots ? "handed out again" : "first boot", job.boots + 1);
	return script_job(s, m->name, &job, base_url, script);
}

/* ---- the job initrd ---- */

static int testlist_copy(const struct bci_store_job *job, void *ctx)
{
	*(char **)ctx = strdup(job->testlist);
	return *(char **)ctx ? 0 : -ENOMEM;
}

int bci_schedule_job_initrd(struct bci_schedule *s, const char *machine, const char *run_id,
			    char **data, size_t *len, char *err, size_t err_size)
{
	char *testlist = NULL;
	int ret;

	ret = bci_store_machine_job_get(s->store, machine, run_id, testlist_copy, &testlist, err,
					err_size);
	if (ret < 0)
		goto out;
	if (!ret) {
		bci_message(err, err_size, "machine %s has no job %s", machine, run_id);
		ret = -ENOENT;
		goto out;
	}
	ret = bci_job_initrd_make(BCI_SCHEDULE_TESTLIST_PATH, testlist, strlen(testlist), data, len);
out:
	free(testlist);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * The scheduler (schedule.h): queueing a build's tiers, answering a
 * machine's netboot, deciding the full tier. Recovery is in recovery.c.
 */
#include "deploy.h"
#include "internal.h"
#include "job_initrd.h"
#include "split.h"

#include "../store/store.h"
#include "fsutil.h"
#include "manifest.h"
#include "message.h"
#include "testlist.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILD_FILE_MAX (16u << 20)

void bci_schedule_say(struct bci_schedule *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	fprintf(s->log, "schedule: ");
	vfprintf(s->log, fmt, ap);
	fputc('\n', s->log);
	fflush(s->log);
	va_end(ap);
}

int bci_schedule_object_path(const char *data_dir, const char *sha256, char *path, size_t size)
{
	int n = snprintf(path, size, "%s/builds/objects/%s", data_dir, sha256);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* ---- a build's files ---- */

struct file_find {
	const char *path;
	char sha256[BCI_SHA256_HEX_LEN + 1];
	bool found;
};

static int file_match(const struct bci_store_build_file *file, void *ctx)
{
	struct file_find *find = ctx;

	if (strcmp(file->path, find->path))
		return 0;
	snprintf(find->sha256, sizeof(find->sha256), "%s", file->sha256);
	find->found = true;
	return 0;
}

/* Reads @build's published file @name: 0, -ENOENT when the build has none. */
static int build_file_read(struct bci_schedule *s, const char *build, const char *name, char **text,
			   size_t *len, char *err, size_t err_size)
{
	struct file_find find = { .path = name };
	char path[4096];
	int ret;

	ret = bci_store_build_files_each(s->store, build, file_match, &find, err, err_size);
	if (ret < 0)
		return ret;
	if (!find.found) {
		bci_message(err, err_size, "build %s has no file %s", build, name);
		return -ENOENT;
	}
	if ((ret = bci_schedule_object_path(s->data_dir, find.sha256, path, sizeof(path))) < 0 ||
	    (ret = bci_read_file(path, text, len, BUILD_FILE_MAX)) < 0) {
		bci_message(err, err_size, "build %s: %s (%s): %s", build, name, path, strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- testlists ---- */

struct tests {
	char **names;
	size_t count;
};

static void tests_free(struct tests *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->names[i]);
	free(t->names);
}

/* The tests of a testlist text, each line as written (trimmed), in order. */
static int tests_read(const char *origin, const char *text, size_t len, struct tests *t, char *err,
		      size_t err_size)
{
	const char *line = text, *end = text + len;
	unsigned number = 0;

	memset(t, 0, sizeof(*t));
	while (line < end) {
		const char *newline = memchr(line, '\n', (size_t)(end - line));
		size_t n = newline ? (size_t)(newline - line) : (size_t)(end - line);
		struct bci_test_name name;
		char *copy, **grown;
		int ret;

		number++;
		copy = strndup(line, n);
		if (!copy)
			goto nomem;
		while (n && (copy[n - 1] == ' ' || copy[n - 1] == '\t' || copy[n - 1] == '\r'))
			copy[--n] = '\0';
		ret = bci_testlist_parse_line(copy, &name, err, err_size);
		if (ret <= 0) {
			if (ret < 0) {
				char why[256];

				snprintf(why, sizeof(why), "%s", err);
				bci_message(err, err_size, "%s:%u: %s", origin, number, why);
				free(copy);
				tests_free(t);
				return ret;
			}
			free(copy);
		} else {
			const char *start = copy + strspn(copy, " \t");

			memmove(copy, start, strlen(start) + 1);
			grown = realloc(t->names, (t->count + 1) * sizeof(*grown));
			if (!grown) {
				free(copy);
				goto nomem;
			}
			t->names = grown;
			t->names[t->count++] = copy;
		}
		line = newline ? newline + 1 : end;
	}
	return 0;
nomem:
	tests_free(t);
	return -ENOMEM;
}

/* ---- queueing ---- */

static int run_id_make(char *run_id, size_t size, const char *build, const char *tier,
		       unsigned shard, unsigned shards)
{
	int n = shards > 1 ? snprintf(run_id, size, "%s-%s-%uof%u", build, tier, shard + 1, shards)
			   : snprintf(run_id, size, "%s-%s", build, tier);

	if (n < 0 || (size_t)n >= size || !bci_manifest_word_ok(run_id))
		return -ENAMETOOLONG;
	return 0;
}

struct run_id_taken {
	const char *run_id;
	bool taken;
};

static int run_id_match(const struct bci_store_job *job, void *ctx)
{
	struct run_id_taken *t = ctx;

	if (!strcmp(job->run_id, t->run_id))
		t->taken = true;
	return 0;
}

static int job_queue(struct bci_schedule *s, const char *machine, const char *build,
		     const char *tier, unsigned shard, unsigned shards, const char *testlist,
		     char *err, size_t err_size)
{
	char base[BCI_MANIFEST_WORD_MAX + 1], run_id[BCI_MANIFEST_WORD_MAX + 1];
	struct bci_store_job job = {
		.machine = machine, .build = build, .tier = tier, .shard = (int)shard,
		.shards = (int)shards, .testlist = testlist, .run_id = run_id,
	};
	struct run_id_taken taken = { .run_id = run_id };
	int ret;

	if (run_id_make(base, sizeof(base), build, tier, shard, shards) < 0) {
		bci_message(err, err_size, "build name %s is too long for a run id", build);
		return -ENAMETOOLONG;
	}
	/*
	 * Queued again (a re-run): the same shards under the next free run id.
	 * Looked up first rather than tried: a failed INSERT would abort the
	 * whole transaction on PostgreSQL.
	 */
	for (unsigned again = 1; again <= BCI_SCHEDULE_MAX_RERUNS + 1; again++) {
		int n = again == 1 ? snprintf(run_id, sizeof(run_id), "%s", base)
				   : snprintf(run_id, sizeof(run_id), "%s-r%u", base, again);

		if (n < 0 || (size_t)n >= sizeof(run_id)) {
			bci_message(err, err_size, "build name %s is too long for a run id", build);
			return -ENAMETOOLONG;
		}
		taken.taken = false;
		ret = bci_store_machine_jobs_each(s->store, machine, run_id_match, &taken, err,
						  err_size);
		if (ret < 0)
			return ret;
		if (!taken.taken)
			return bci_store_job_add(s->store, &job, NULL, err, err_size);
	}
	bci_message(err, err_size, "%s already ran %d times on %s", base, BCI_SCHEDULE_MAX_RERUNS + 1,
		    machine);
	return -EEXIST;
}

/* Joins the tests of @t that @shard_of puts on @shard (all when @shard_of is NULL). */
static char *testlist_join(const struct tests *t, const unsigned *shard_of, unsigned shard)
{
	size_t size = 1, len = 0;
	char *text;

	for (size_t i = 0; i < t->count; i++)
		size += strlen(t->names[i]) + 1;
	text = malloc(size);
	if (!text)
		return NULL;
	for (size_t i = 0; i < t->count; i++)
		if (!shard_of || shard_of[i] == shard)
			len += (size_t)sprintf(text + len, "%s\n", t->names[i]);
	text[len] = '\0';
	return text;
}

struct recorded {
	char **machines;
	char **testlists;
	unsigned count;
};

static int split_row(const struct bci_store_split *split, void *ctx)
{
	struct recorded *r = ctx;
	char **m = realloc(r->machines, (r->count + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	r->machines = m;
	m = realloc(r->testlists, (r->count + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	r->testlists = m;
	r->machines[r->count] = strdup(split->machine);
	r->testlists[r->count] = strdup(split->testlist);
	r->count++;
	return r->machines[r->count - 1] && r->testlists[r->count - 1] ? 0 : -ENOMEM;
}

static void recorded_free(struct recorded *r)
{
	for (unsigned i = 0; i < r->count; i++) {
		free(r->machines[i]);
		free(r->testlists[i]);
	}
	free(r->machines);
	free(r->testlists);
}

/*
 * The shards of @group for @build's @tier: the recorded split if there is
 * one, else a new split by past durations over @members, recorded.
 */
static int group_queue(struct bci_schedule *s, const char *build, const char *tier,
		       const char *group, const char **members, unsigned n, const struct tests *t,
		       char *err, size_t err_size)
{
	struct recorded rec = { 0 };
	unsigned *shard_of = NULL;
	double *durations = NULL, *loads = NULL;
	int ret, queued = 0;

	ret = bci_store_splits_each(s->store, build, tier, group, split_row, &rec, err, err_size);
	if (ret < 0)
		goto out;
	if (rec.count == 0) {
		shard_of = calloc(t->count ? t->count : 1, sizeof(*shard_of));
		durations = calloc(t->count ? t->count : 1, sizeof(*durations));
		loads = calloc(n, sizeof(*loads));
		if (!shard_of || !durations || !loads) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < t->count; i++) {
			durations[i] = -1;
			ret = bci_store_test_duration(s->store, t->names[i], &durations[i], err,
						      err_size);
			if (ret < 0)
				goto out;
		}
		if ((ret = bci_split_assign(durations, t->count, n, shard_of, loads)) < 0)
			goto out;
		for (unsigned k = 0; k < n; k++) {
			char *text = testlist_join(t, shard_of, k);
			struct bci_store_split split = {
				.build = build, .tier = tier, .group = group, .shard = (int)k,
				.shards = (int)n, .machine = members[k], .testlist = text,
			};

			if (!text) {
				ret = -ENOMEM;
				goto out;
			}
			ret = bci_store_split_add(s->store, &split, err, err_size);
			free(text);
			if (ret < 0)
				goto out;
			bci_schedule_say(s, "%s %s: group %s shard %u/%u on %s, about %.0f s", build, tier, group,
			    k + 1, n, members[k], loads[k]);
		}
		ret = bci_store_splits_each(s->store, build, tier, group, split_row, &rec, err,
					    err_size);
		if (ret < 0)
			goto out;
	}
	for (unsigned k = 0; k < rec.count; k++) {
		if (bci_schedule_machine_out(s, rec.machines[k]))
			bci_schedule_say(s, "%s %s: shard %u/%u of group %s: %s is out of the schedule, queued anyway"
			    " (it runs when the machine is back)", build, tier, k + 1, rec.count, group,
			    rec.machines[k]);
		ret = job_queue(s, rec.machines[k], build, tier, k, rec.count, rec.testlists[k], err,
				err_size);
		if (ret < 0)
			goto out;
		queued++;
	}
	ret = queued;
out:
	recorded_free(&rec);
	free(shard_of);
	free(durations);
	free(loads);
	return ret;
}

/* Queues @tier of @build and, when @decision is given, records it as the full tier's gate, together. */
static int queue_tier(struct bci_schedule *s, const char *build, const char *tier,
		      const char *decision, char *err, size_t err_size)
{
	const struct bci_inventory *inv = s->inventory;
	bool full = !strcmp(tier, "full");
	char *text = NULL, *whole = NULL;
	const char **members = NULL;
	struct tests t = { 0 };
	size_t len;
	int ret, queued = 0;

	if (!full && strcmp(tier, "fast")) {
		bci_message(err, err_size, "tier '%s' (fast or full)", tier);
		return -EINVAL;
	}
	ret = build_file_read(s, build, full ? BCI_SCHEDULE_FULL_TESTLIST : BCI_SCHEDULE_FAST_TESTLIST,
			      &text, &len, err, err_size);
	if (ret < 0)
		return ret;
	ret = tests_read(full ? BCI_SCHEDULE_FULL_TESTLIST : BCI_SCHEDULE_FAST_TESTLIST, text, len,
			 &t, err, err_size);
	free(text);
	if (ret < 0)
		return ret;
	whole = testlist_join(&t, NULL, 0);
	members = calloc(inv->machine_count + 1, sizeof(*members));
	if (!whole || !members) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = bci_store_begin(s->store, err, err_size)) < 0)
		goto out;
	/* The splits below read the tests' mean durations: the runs stored since, counted. */
	if (full && (ret = bci_store_durations_fold(s->store, err, err_size)) < 0)
		goto rollback;
	for (size_t i = 0; i < inv->machine_count; i++) {
		const struct bci_inventory_machine *m = &inv->machines[i];
		unsigned n = 0;

		/* The fast tier runs whole everywhere; a group's full tier once, split. */
		if (!full || !m->shard_group) {
			if (bci_schedule_machine_out(s, m->name))
				continue;
			ret = job_queue(s, m->name, build, tier, 0, 1, whole, err, err_size);
			if (ret < 0)
				goto rollback;
			queued++;
			continue;
		}
		/* The group's first member queues the whole group. */
		bool first = true;

		for (size_t j = 0; j < i; j++)
			if (inv->machines[j].shard_group &&
			    !strcmp(inv->machines[j].shard_group, m->shard_group))
				first = false;
		if (!first)
			continue;
		for (size_t j = i; j < inv->machine_count; j++)
			if (inv->machines[j].shard_group &&
			    !strcmp(inv->machines[j].shard_group, m->shard_group))
				members[n++] = inv->machines[j].name;
		ret = group_queue(s, build, tier, m->shard_group, members, n, &t, err, err_size);
		if (ret < 0)
			goto rollback;
		queued += ret;
	}
	if (decision && (ret = bci_store_gate_put(s->store, build, decision, err, err_size)) < 0)
		goto rollback;
	if ((ret = bci_store_commit(s->store, err, err_size)) < 0)
		goto rollback;
	bci_schedule_say(s, "%s: %s tier queued, %d job(s) of %zu test(s)", build, tier, queued, t.count);
	ret = queued;
	goto out;
rollback:
	bci_store_rollback(s->store);
out:
	free(members);
	free(whole);
	tests_free(&t);
	return ret;
}

int bci_schedule_queue(struct bci_schedule *s, const char *build, const char *tier, char *err,
		       size_t err_size)
{
	return queue_tier(s, build, tier, NULL, err, err_size);
}

/* ---- machine states ---- */

static int state_row(const struct bci_store_machine_state *state, void *ctx)
{
	struct bci_schedule_state *c = ctx;

	snprintf(c->state, sizeof(c->state), "%s", state->state);
	c->last_seen = state->last_seen;
	c->last_cycle = state->last_cycle;
	c->power_cycles = state->power_cycles;
	snprintf(c->note, sizeof(c->note), "%s", state->note ? state->note : "");
	return 0;
}

int bci_schedule_state_read(struct bci_schedule *s, const char *machine, struct bci_schedule_state *c,
			    char *err, size_t err_size)
{
	int ret = bci_store_machine_state_get(s->store, machine, state_row, c, err, err_size);

	if (ret == -ENOENT)
		return 0;
	return ret < 0 ? ret : 1;
}

bool bci_schedule_machine_out(struct bci_schedule *s, const char *machine)
{
	struct bci_schedule_state c;
	char err[256];

	return bci_schedule_state_read(s, machine, &c, err, sizeof(err)) == 1 &&
	       !strcmp(c.state, "out");
}

/* ---- netboot ---- */

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
	return 0;
}

static int run_exists(const struct bci_store_run *run, void *ctx)
{
	(void)run;
	*(bool *)ctx = true;
	return 0;
}

/* 1 when @machine uploaded run @run_id, 0 when not, -errno. */
static int run_uploaded(struct bci_schedule *s, const char *machine, const char *run_id, char *err,
			size_t err_size)
{
	bool found = false;
	int ret = bci_store_run_get(s->store, machine, run_id, run_exists, &found, err, err_size);

	if (ret == -ENOENT)
		return 0;
	return ret < 0 ? ret : found;
}

/* The command line the builder gave the image: its boot.ipxe's kernel line after the initrd=. */
static int build_cmdline(struct bci_schedule *s, const char *build, char *out, size_t size)
{
	static const char prefix[] = "kernel vmlinuz initrd=initrd.img";
	char *text = NULL, *line, err[256];
	size_t len;

	out[0] = '\0';
	if (build_file_read(s, build, "boot.ipxe", &text, &len, err, sizeof(err)) < 0)
		return 0;
	for (line = text; line && *line;) {
		char *newline = strchr(line, '\n');

		if (newline)
			*newline = '\0';
		if (!strncmp(line, prefix, sizeof(prefix) - 1) &&
		    (line[sizeof(prefix) - 1] == ' ' || !line[sizeof(prefix) - 1])) {
			const char *args = line + sizeof(prefix) - 1;

			args += strspn(args, " ");
			/* Only printable text goes into our script: a line break would add commands. */
			for (const char *p = args; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					args = "";
			snprintf(out, size, "%s", args);
			break;
		}
		line = newline ? newline + 1 : NULL;
	}
	free(text);
	return 0;
}

void bci_schedule_build_cmdline(struct bci_schedule *s, const char *build, char *out, size_t size)
{
	build_cmdline(s, build, out, size);
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
	char cmdline[2048], shard[48] = "";

	build_cmdline(s, job->build, cmdline, sizeof(cmdline));
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
		     " bootci.run_id=%s bootci.testlist=/%s\n"
		     "initrd --name job.img %s/api/v1/machines/%s/jobs/%s/initrd\n"
		     "initrd --name initrd.img %s/api/v1/builds/%s/files/initrd.img\n"
		     "boot\n",
		     machine, job->run_id, job->build, job->tier, shard, base_url, job->build,
		     cmdline[0] ? " " : "", cmdline, job->run_id, BCI_SCHEDULE_TESTLIST_PATH, base_url,
		     machine, job->run_id, base_url, job->build) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * A job booted BCI_SCHEDULE_MAX_BOOTS times and never uploaded: the
 * firmware came back to netboot each time instead of starting the disk's
 * known-good image, so the disk is marked damaged and re-deployed now.
 * 1 with the deploy job's script, 0, -errno.
 */
static int disk_suspect(struct bci_schedule *s, const char *machine, const struct job_copy *job,
			const char *base_url, char **script, char *err, size_t err_size)
{
	char why[256];
	int ret;

	snprintf(why, sizeof(why), "%s booted %d times and its run never uploaded: the known-good"
		 " image does not start", job->run_id, job->boots);
	if ((ret = bci_schedule_redeploy(s, machine, why, err, err_size)) < 0)
		return ret;
	return bci_schedule_deploy_boot(s, machine, base_url, script, err, err_size);
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
		ret = run_uploaded(s, m->name, job.run_id, err, err_size);
		if (ret < 0)
			return ret;
		if (ret) {
			ret = bci_store_job_update(s->store, job.key, "done", job.boots, 0, err,
						   err_size);
			if (ret < 0)
				return ret;
			continue;
		}
		if (!strcmp(job.state, "booted")) {
			if (job.boots >= BCI_SCHEDULE_MAX_BOOTS) {
				bci_schedule_say(s, "boot: %s: %s abandoned after %d boots without an upload",
				    m->name, job.run_id, job.boots);
				ret = bci_store_job_update(s->store, job.key, "abandoned", job.boots, 0,
							   err, err_size);
				if (ret < 0)
					return ret;
				/* Its executor ran each time, the known-good image never uploaded. */
				if ((ret = disk_suspect(s, m->name, &job, base_url, script, err,
							err_size)) != 0)
					return ret < 0 ? ret : 0;
				continue;
			}
		}
		break;
	}
	ret = bci_store_job_update(s->store, job.key, "booted", job.boots + 1, now, err, err_size);
	if (ret < 0)
		return ret;
	bci_schedule_say(s, "boot: %s: %s (%s, boot %d)", m->name, job.run_id,
	    job.boots ? "handed out again" : "first boot", job.boots + 1);
	return script_job(s, m->name, &job, base_url, script);
}

/* ---- the job initrd ---- */

struct job_find {
	const char *run_id;
	char *testlist;
	bool found;
};

static int job_match(const struct bci_store_job *job, void *ctx)
{
	struct job_find *f = ctx;

	if (f->found || strcmp(job->run_id, f->run_id))
		return 0;
	f->found = true;
	f->testlist = strdup(job->testlist);
	return f->testlist ? 0 : -ENOMEM;
}

int bci_schedule_job_initrd(struct bci_schedule *s, const char *machine, const char *run_id,
			    char **data, size_t *len, char *err, size_t err_size)
{
	struct job_find find = { .run_id = run_id };
	int ret;

	ret = bci_store_machine_jobs_each(s->store, machine, job_match, &find, err, err_size);
	if (ret < 0)
		goto out;
	if (!find.found) {
		bci_message(err, err_size, "machine %s has no job %s", machine, run_id);
		ret = -ENOENT;
		goto out;
	}
	ret = bci_job_initrd_make(BCI_SCHEDULE_TESTLIST_PATH, find.testlist, strlen(find.testlist),
				  data, len);
out:
	free(find.testlist);
	return ret;
}

struct run_build {
	const char *run_id;
	char *build;
	size_t size;
	bool found;
};

static int run_build_match(const struct bci_store_job *job, void *ctx)
{
	struct run_build *r = ctx;

	if (!r->found && !strcmp(job->run_id, r->run_id)) {
		snprintf(r->build, r->size, "%s", job->build);
		r->found = true;
	}
	return 0;
}

int bci_schedule_run_build(struct bci_store *store, const char *machine, const char *run_id,
			   char *build, size_t size, char *err, size_t err_size)
{
	struct run_build r = { .run_id = run_id, .build = build, .size = size };
	int ret = bci_store_machine_jobs_each(store, machine, run_build_match, &r, err, err_size);

	return ret < 0 ? ret : r.found;
}

/* ---- a run in the store ---- */

struct run_job {
	const char *run_id;
	int64_t key;
	char build[256], tier[8];
	int boots;
	double booted;
	bool found, done;
};

static int run_job_match(const struct bci_store_job *job, void *ctx)
{
	struct run_job *r = ctx;

	if (r->found || strcmp(job->run_id, r->run_id))
		return 0;
	r->found = true;
	r->key = job->key;
	snprintf(r->build, sizeof(r->build), "%s", job->build);
	snprintf(r->tier, sizeof(r->tier), "%s", job->tier);
	r->boots = job->boots;
	r->booted = job->booted;
	r->done = !strcmp(job->state, "done");
	return 0;
}

struct build_copy {
	char *name, *tree, *commit, *base, *series_title, *message_id;
	char tier[8];
	double registered;
	bool oom;
};

static char *dup_or_null(const char *text, bool *oom)
{
	char *copy = text ? strdup(text) : NULL;

	if (text && !copy)
		*oom = true;
	return copy;
}

static int build_copy_row(const struct bci_store_build *build, void *ctx)
{
	struct build_copy *c = ctx;

	c->name = dup_or_null(build->name, &c->oom);
	c->tree = dup_or_null(build->tree, &c->oom);
	c->commit = dup_or_null(build->commit, &c->oom);
	c->base = dup_or_null(build->base, &c->oom);
	c->series_title = dup_or_null(build->series_title, &c->oom);
	c->message_id = dup_or_null(build->message_id, &c->oom);
	snprintf(c->tier, sizeof(c->tier), "%s", build->tier ? build->tier : "");
	c->registered = build->registered;
	return c->oom ? -ENOMEM : 0;
}

/* The build's tier becomes full: its results now include the full tier's. */
static int build_tier_full(struct bci_store *store, const char *build, char *err, size_t err_size)
{
	struct build_copy c = { 0 };
	int ret = bci_store_build_get(store, build, build_copy_row, &c, err, err_size);

	if (ret >= 0 && strcmp(c.tier, "full")) {
		struct bci_store_build put = {
			.name = c.name, .tree = c.tree, .commit = c.commit, .tier = "full",
			.base = c.base, .series_title = c.series_title, .message_id = c.message_id,
			.registered = c.registered,
		};

		ret = bci_store_build_put(store, &put, err, err_size);
	}
	free(c.name);
	free(c.tree);
	free(c.commit);
	free(c.base);
	free(c.series_title);
	free(c.message_id);
	return ret < 0 ? ret : 0;
}

int bci_schedule_run_ingested(struct bci_store *store, const char *machine, const char *run_id,
			      char *err, size_t err_size)
{
	struct run_job r = { .run_id = run_id };
	int ret = bci_store_machine_jobs_each(store, machine, run_job_match, &r, err, err_size);

	if (ret < 0 || !r.found)
		return ret < 0 ? ret : 0;
	if (!r.done && (ret = bci_store_job_update(store, r.key, "done", r.boots, r.booted, err,
						   err_size)) < 0)
		return ret;
	if (!strcmp(r.tier, "full") && (ret = build_tier_full(store, r.build, err, err_size)) < 0)
		return ret;
	return 1;
}

/* ---- the full tier's gate ---- */

struct tier_progress {
	struct bci_schedule *s;
	int pending;
	int error;
	char *err;
	size_t err_size;
};

static int job_progress(const struct bci_store_job *job, void *ctx)
{
	struct tier_progress *p = ctx;
	int ret;

	if (!strcmp(job->state, "done") || !strcmp(job->state, "abandoned"))
		return 0;
	ret = run_uploaded(p->s, job->machine, job->run_id, p->err, p->err_size);
	if (ret < 0)
		return ret;
	if (ret)
		return bci_store_job_update(p->s->store, job->key, "done", job->boots, job->booted,
					    p->err, p->err_size);
	p->pending++;
	return 0;
}

struct names {
	char **v;
	size_t count;
};

static int name_add(const char *name, void *ctx)
{
	struct names *n = ctx;
	char **grown = realloc(n->v, (n->count + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	n->v = grown;
	return (n->v[n->count++] = strdup(name)) ? 0 : -ENOMEM;
}

struct build_tree {
	char tree[256];
};

static int build_row(const struct bci_store_build *build, void *ctx)
{
	snprintf(((struct build_tree *)ctx)->tree, sizeof(((struct build_tree *)ctx)->tree), "%s",
		 build->tree);
	return 0;
}

/* Decides @build's full tier if its fast tier is done. */
static int gate_one(struct bci_schedule *s, const char *build, char *err, size_t err_size)
{
	struct tier_progress progress = { .s = s, .err = err, .err_size = err_size };
	struct build_tree tree = { "" };
	enum bci_full_rule rule;
	int ret, issue;

	ret = bci_store_jobs_each(s->store, build, "fast", job_progress, &progress, err, err_size);
	if (ret < 0)
		return ret;
	if ((ret = bci_store_build_get(s->store, build, build_row, &tree, err, err_size)) < 0)
		return ret;
	rule = bci_inventory_full_rule(s->inventory, tree.tree);
	if (rule == BCI_FULL_NEVER) {
		bci_schedule_say(s, "%s: full tier not run (tree %s: full = never)", build, tree.tree);
		return bci_store_gate_put(s->store, build, "skipped: the tree never runs it", err,
					  err_size);
	}
	if (rule == BCI_FULL_ALWAYS) {
		ret = queue_tier(s, build, "full", "queued: the tree always runs it", err, err_size);
		return ret < 0 ? ret : 0;
	}
	if (progress.pending)
		return 0;
	if (!s->judge) {
		bci_schedule_say(s, "%s: fast tier done; no judge of possible new issues is wired: full tier waits",
		    build);
		return 0;
	}
	issue = s->judge(s->store, build, s->judge_ctx, err, err_size);
	if (issue < 0)
		return issue;
	if (issue) {
		bci_schedule_say(s, "%s: fast tier found a possible new issue: full tier not queued", build);
		return bci_store_gate_put(s->store, build,
					  "skipped: the fast tier found a possible new issue", err,
					  err_size);
	}
	ret = queue_tier(s, build, "full", "queued: the fast tier found no possible new issue", err,
			 err_size);
	return ret < 0 ? ret : 0;
}

int bci_schedule_gates(struct bci_schedule *s, char *err, size_t err_size)
{
	struct names builds = { 0 };
	int ret;

	ret = bci_store_builds_ungated(s->store, name_add, &builds, err, err_size);
	for (size_t i = 0; ret >= 0 && i < builds.count; i++)
		ret = gate_one(s, builds.v[i], err, err_size);
	for (size_t i = 0; i < builds.count; i++)
		free(builds.v[i]);
	free(builds.v);
	return ret < 0 ? ret : 0;
}

int bci_schedule_tick(struct bci_schedule *s, double now, char *err, size_t err_size)
{
	int ret = bci_schedule_gates(s, err, err_size);

	if (ret < 0)
		return ret;
	return bci_schedule_recover(s, now, err, err_size);
}

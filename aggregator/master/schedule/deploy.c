// SPDX-License-Identifier: MIT
/* Re-deploy of a damaged disk (deploy.h): the marks, the deploy job's answer and initrd. */
#include "deploy.h"

#include "../names.h"
#include "../store/store.h"
#include "deploy_plan.h"
#include "fsutil.h"
#include "internal.h"
#include "job_initrd.h"
#include "manifest.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MARK_NOTE_MAX 512
/* The deploying mark: its note line and three short lines. */
#define MARK_TEXT_MAX 2048

static int mark_path(struct bci_schedule *s, const char *which, const char *machine, char *path,
		     size_t size)
{
	if (!bci_name_machine_ok(machine))
		return -EINVAL;
	if ((size_t)snprintf(path, size, "%s/schedule/%s/%s", s->data_dir, which, machine) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Writes the mark @which of @machine holding @text (temporary, fsync, rename). */
static int mark_write(struct bci_schedule *s, const char *which, const char *machine,
		      const char *text, char *err, size_t err_size)
{
	char path[4096], dir[4096];
	int ret;

	if ((ret = mark_path(s, which, machine, path, sizeof(path))) < 0) {
		bci_message(err, err_size, "machine name '%s' cannot name a mark file", machine);
		return ret;
	}
	snprintf(dir, sizeof(dir), "%s/schedule/%s", s->data_dir, which);
	if ((ret = bci_mkdir_p(dir, 0755)) < 0 ||
	    (ret = bci_write_file_atomic(path, text, strlen(text), 0644)) < 0)
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

/* 1 with the mark's text in @note, 0 when there is none, -errno (@err). */
static int mark_read(struct bci_schedule *s, const char *which, const char *machine, char *note,
		     size_t note_size, char *err, size_t err_size)
{
	char path[4096], *text = NULL;
	size_t len;
	int ret;

	if ((ret = mark_path(s, which, machine, path, sizeof(path))) < 0) {
		bci_message(err, err_size, "machine name '%s' cannot name a mark file", machine);
		return ret;
	}
	ret = bci_read_file(path, &text, &len, MARK_NOTE_MAX);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	len = strcspn(text, "\n");
	snprintf(note, note_size, "%.*s", (int)len, text);
	free(text);
	return 1;
}

static int mark_remove(struct bci_schedule *s, const char *which, const char *machine, char *err,
		       size_t err_size)
{
	char path[4096];
	int ret;

	if ((ret = mark_path(s, which, machine, path, sizeof(path))) < 0)
		return ret;
	if (unlink(path) < 0 && errno != ENOENT) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		return ret;
	}
	/* Not durable only means a crash may repeat one deploy. */
	(void)bci_fsync_parent(path);
	return 0;
}

/* The deploying mark (deploy.h), read and written whole. */
struct deploying {
	char note[MARK_NOTE_MAX];	/* its first line: "<version> (was: <reason>)" */
	char version[BCI_MANIFEST_WORD_MAX + 1];
	char deploy_id[BCI_DEPLOY_PLAN_WORD_MAX + 1];	/* "" in a mark of an older master */
	int handed, given_up;
};

/* 1 with @d filled, 0 when there is no deploying mark, -errno (@err). */
static int deploying_read(struct bci_schedule *s, const char *machine, struct deploying *d,
			  char *err, size_t err_size)
{
	char path[4096], *text = NULL, *line, *next;
	size_t len;
	int ret;

	memset(d, 0, sizeof(*d));
	if ((ret = mark_path(s, "deploying", machine, path, sizeof(path))) < 0) {
		bci_message(err, err_size, "machine name '%s' cannot name a mark file", machine);
		return ret;
	}
	ret = bci_read_file(path, &text, &len, MARK_TEXT_MAX);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (line = text; line && *line; line = next) {
		char *value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line == text) {
			snprintf(d->note, sizeof(d->note), "%s", line);
			snprintf(d->version, sizeof(d->version), "%.*s",
				 (int)strcspn(line, " "), line);
			continue;
		}
		value = strchr(line, ' ');
		if (!value)
			continue;
		*value++ = '\0';
		if (!strcmp(line, "deploy_id") && bci_name_run_id_ok(value) &&
		    strlen(value) < sizeof(d->deploy_id))
			snprintf(d->deploy_id, sizeof(d->deploy_id), "%s", value);
		else if (!strcmp(line, "handed"))
			d->handed = atoi(value);
		else if (!strcmp(line, "given_up"))
			d->given_up = atoi(value);
	}
	free(text);
	return 1;
}

static int deploying_write(struct bci_schedule *s, const char *machine, const struct deploying *d,
			   char *err, size_t err_size)
{
	char text[MARK_TEXT_MAX];

	snprintf(text, sizeof(text), "%s\ndeploy_id %s\nhanded %d\ngiven_up %d\n", d->note,
		 d->deploy_id, d->handed, d->given_up);
	return mark_write(s, "deploying", machine, text, err, err_size);
}

/*
 * A new deploy id: the UTC time and 32 random bits, none the machine's
 * runs already have (its record is a run of that name). 0 or -errno.
 */
static int deploy_id_new(struct bci_schedule *s, const char *machine, char *id, size_t size,
			 char *err, size_t err_size)
{
	for (int tries = 0; tries < 8; tries++) {
		time_t now = time(NULL);
		uint32_t bits = 0;
		struct tm tm;
		int ret;

		if (getrandom(&bits, sizeof(bits), 0) != (ssize_t)sizeof(bits))
			bits = (uint32_t)now ^ ((uint32_t)getpid() << 16) ^ (uint32_t)tries;
		gmtime_r(&now, &tm);
		snprintf(id, size, "deploy-%04d%02d%02dT%02d%02d%02dZ-%08x", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, bits);
		ret = bci_schedule_run_uploaded(s, machine, id, err, err_size);
		if (ret <= 0)
			return ret;
	}
	bci_message(err, err_size, "%s: no deploy id that is not a run of it already", machine);
	return -EEXIST;
}

int bci_schedule_deploy_state(struct bci_schedule *s, const char *machine, char *note,
			      size_t note_size, char *err, size_t err_size)
{
	int ret = mark_read(s, "deploying", machine, note, note_size, err, err_size);

	if (ret != 0)
		return ret < 0 ? ret : BCI_DEPLOY_DEPLOYING;
	ret = mark_read(s, "damaged", machine, note, note_size, err, err_size);
	if (ret != 0)
		return ret < 0 ? ret : BCI_DEPLOY_DAMAGED;
	note[0] = '\0';
	return BCI_DEPLOY_NONE;
}

int bci_schedule_redeploy(struct bci_schedule *s, const char *machine, const char *why,
			  char *err, size_t err_size)
{
	char note[MARK_NOTE_MAX], text[MARK_NOTE_MAX + 2];
	int ret;

	if (!bci_inventory_by_name(s->inventory, machine)) {
		bci_message(err, err_size, "no machine %s in the inventory", machine);
		return -ENOENT;
	}
	if ((ret = bci_schedule_deploy_state(s, machine, note, sizeof(note), err, err_size)) < 0)
		return ret;
	if (ret != BCI_DEPLOY_NONE) {
		bci_schedule_say(s, "%s: already marked for a re-deploy (%s)", machine, note);
		return 0;
	}
	/* One line: the reason is shown by `schedule` and in the log. */
	snprintf(text, sizeof(text), "%.*s\n", MARK_NOTE_MAX - 1, why);
	for (char *p = text; *p && p[1]; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	if ((ret = mark_write(s, "damaged", machine, text, err, err_size)) < 0)
		return ret;
	bci_schedule_say(s, "%s: disk damaged (%s): its next boot re-deploys it", machine, why);
	return 1;
}

/* ---- the deploy job ---- */

static int version_copy(const char *version, void *ctx)
{
	snprintf(ctx, BCI_MANIFEST_WORD_MAX + 1, "%s", version);
	return 0;
}

static int build_copy(const struct bci_store_job *job, void *ctx)
{
	/* The last row wins: the machine's newest job names the build it ran last. */
	snprintf(ctx, BCI_MANIFEST_WORD_MAX + 1, "%s", job->build);
	return 0;
}

/* Known-good image @version's disk image, one a deploy initrd can carry. */
static int image_find(struct bci_schedule *s, const char *version, struct bci_schedule_file *f,
		      char *err, size_t err_size)
{
	int ret = bci_schedule_file_find(s->store, true, version, BCI_DEPLOY_IMAGE_FILE, f, err,
					 err_size);

	if (ret < 0)
		return ret;
	if (!ret) {
		bci_message(err, err_size, "known-good image %s has no %s", version,
			    BCI_DEPLOY_IMAGE_FILE);
		return -ENOENT;
	}
	if (f->size > BCI_DEPLOY_IMAGE_MAX) {
		bci_message(err, err_size, "known-good image %s: %s is %llu bytes, more than the"
			    " %lu a deploy initrd carries", version, BCI_DEPLOY_IMAGE_FILE,
			    (unsigned long long)f->size, BCI_DEPLOY_IMAGE_MAX);
		return -EFBIG;
	}
	return 0;
}

/*
 * BCI_DEPLOY_TRIES deploy jobs without the record coming in: the machine
 * taken out of the schedule (what the master gives up on, a person looks at),
 * `exit` in *@script. Returned, it gets as many tries again. 1 or -errno.
 */
static int deploy_give_up(struct bci_schedule *s, const char *machine, struct deploying *d,
			  char **script, char *err, size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	char note[256];
	int ret;

	d->given_up = d->handed;
	if ((ret = deploying_write(s, machine, d, err, err_size)) < 0 ||
	    (ret = bci_schedule_state_read(s, machine, &state, err, err_size)) < 0)
		return ret;
	snprintf(note, sizeof(note), "re-deploy %s handed out %d times, its record never came in:"
		 " taken out of the schedule (its console says why)", d->deploy_id, BCI_DEPLOY_TRIES);
	struct bci_store_machine_state put = {
		.machine = machine, .state = "out", .last_seen = state.last_seen,
		.power_cycles = state.power_cycles, .last_cycle = state.last_cycle, .note = note,
	};
	bci_schedule_say(s, "boot: %s: %s", machine, note);
	if ((ret = bci_schedule_take_out(s, &put, err, err_size)) < 0)
		return ret;
	if (asprintf(script, "#!ipxe\n# bootci: %s is out of the schedule: its re-deploy never"
		     " finished\nexit\n", machine) < 0)
		return -ENOMEM;
	return 1;
}

int bci_schedule_deploy_boot(struct bci_schedule *s, const char *machine, const char *base_url,
			     char **script, char *err, size_t err_size)
{
	char note[MARK_NOTE_MAX], build[BCI_MANIFEST_WORD_MAX + 1] = "", cmdline[2048];
	struct bci_schedule_file image;
	struct deploying d;
	int state, ret;

	state = bci_schedule_deploy_state(s, machine, note, sizeof(note), err, err_size);
	if (state <= BCI_DEPLOY_NONE)
		return state;
	if (state == BCI_DEPLOY_DEPLOYING) {
		if ((ret = deploying_read(s, machine, &d, err, err_size)) < 0)
			return ret;
		/* Over only once the machine said so: the deploy's record, uploaded. */
		if (d.deploy_id[0]) {
			ret = bci_schedule_run_uploaded(s, machine, d.deploy_id, err, err_size);
			if (ret < 0)
				return ret;
			if (ret) {
				if ((ret = mark_remove(s, "deploying", machine, err, err_size)) < 0)
					return ret;
				bci_schedule_say(s, "boot: %s: back after its re-deploy (%s): its record"
						 " %s came in: scheduled again", machine, d.note,
						 d.deploy_id);
				return 0;
			}
		}
		if (d.handed - d.given_up >= BCI_DEPLOY_TRIES)
			return deploy_give_up(s, machine, &d, script, err, err_size);
	} else {
		memset(&d, 0, sizeof(d));
		if ((ret = bci_store_known_good_latest(s->store, version_copy, d.version, err,
						       err_size)) < 0)
			return ret;
		snprintf(d.note, sizeof(d.note), "%s (was: %.300s)", d.version, note);
	}
	if ((ret = bci_store_machine_jobs_each(s->store, machine, build_copy, build, err,
					       err_size)) < 0)
		return ret;
	if (!d.version[0] || !build[0]) {
		/* Nothing to deploy with yet: the firmware tries its disk; the mark stays. */
		bci_schedule_say(s, "boot: %s: disk damaged but %s: exit", machine,
				 !d.version[0] ? "no known-good image is published"
					       : "it never ran a build whose kernel could deploy");
		if (asprintf(script, "#!ipxe\n# bootci: %s needs a re-deploy it cannot get yet\nexit\n",
			     machine) < 0)
			return -ENOMEM;
		return 1;
	}
	if ((ret = image_find(s, d.version, &image, err, err_size)) < 0)
		return ret;
	/* One id for every attempt: a restarted one finds the salvage the cut one left. */
	if (!d.deploy_id[0] &&
	    (ret = deploy_id_new(s, machine, d.deploy_id, sizeof(d.deploy_id), err, err_size)) < 0)
		return ret;
	bci_schedule_build_cmdline(s, build, cmdline, sizeof(cmdline));
	d.handed++;
	if ((ret = deploying_write(s, machine, &d, err, err_size)) < 0 ||
	    (ret = mark_remove(s, "damaged", machine, err, err_size)) < 0)
		return ret;
	if (state == BCI_DEPLOY_DAMAGED)
		bci_schedule_say(s, "boot: %s: re-deployed with known-good %s (%llu bytes) by build"
				 " %s's kernel (deploy %s)", machine, d.version,
				 (unsigned long long)image.size, build, d.deploy_id);
	else
		bci_schedule_say(s, "boot: %s: its re-deploy %s did not finish (no record came in):"
				 " handed out again, try %d of %d", machine, d.deploy_id,
				 d.handed - d.given_up, BCI_DEPLOY_TRIES);
	/* The deploy archive first, as a job's: the kernel stops unpacking after a zstd one. */
	if (asprintf(script,
		     "#!ipxe\n"
		     "# bootci: %s is re-deployed with known-good image %s\n"
		     "kernel %s/api/v1/builds/%s/files/vmlinuz initrd=deploy.img initrd=initrd.img%s%s"
		     " bootci.mode=deploy bootci.deploy=/%s\n"
		     "initrd --name deploy.img %s/api/v1/machines/%s/deploy/%s/initrd\n"
		     "initrd --name initrd.img %s/api/v1/builds/%s/files/initrd.img\n"
		     "boot\n",
		     machine, d.version, base_url, build, cmdline[0] ? " " : "", cmdline,
		     BCI_DEPLOY_PLAN_PATH, base_url, machine, d.version, base_url, build) < 0)
		return -ENOMEM;
	return 1;
}

void bci_deploy_initrd_clear(struct bci_deploy_initrd *initrd)
{
	free(initrd->head);
	free(initrd->tail);
	if (initrd->fd >= 0)
		close(initrd->fd);
	*initrd = (struct bci_deploy_initrd){ .fd = -1 };
}

int bci_schedule_deploy_initrd(struct bci_schedule *s, const char *machine, const char *version,
			       struct bci_deploy_initrd *out, char *err, size_t err_size)
{
	char path[4096], *text = NULL, *plan_archive = NULL, *head = NULL;
	struct bci_deploy_plan plan = { .esp_partition = 1 };
	size_t plan_len = 0, head_len = 0;
	struct bci_schedule_file image;
	struct deploying d;
	struct stat st;
	int ret;

	*out = (struct bci_deploy_initrd){ .fd = -1 };
	ret = deploying_read(s, machine, &d, err, err_size);
	if (ret < 0)
		return ret;
	if (ret == 0 || strcmp(d.version, version) || !d.deploy_id[0]) {
		bci_message(err, err_size, "machine %s is not being re-deployed with known-good %s",
			    machine, version);
		return -ENOENT;
	}
	if ((ret = image_find(s, version, &image, err, err_size)) < 0)
		return ret;
	if ((ret = bci_schedule_object_path(s->data_dir, image.sha256, path, sizeof(path))) < 0) {
		bci_message(err, err_size, "known-good %s: %s: %s", version, path, strerror(-ret));
		return ret;
	}
	out->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (out->fd < 0 || fstat(out->fd, &st) < 0) {
		ret = -errno;
		bci_message(err, err_size, "known-good %s: %s: %s", version, path, strerror(errno));
		goto fail;
	}
	if ((uint64_t)st.st_size != image.size) {
		bci_message(err, err_size, "known-good %s: %s is %lld bytes, registered as %llu",
			    version, path, (long long)st.st_size, (unsigned long long)image.size);
		ret = -EIO;
		goto fail;
	}
	out->image_size = image.size;
	/* The executor checks what it wrote against this digest. */
	snprintf(plan.machine, sizeof(plan.machine), "%s", machine);
	snprintf(plan.known_good, sizeof(plan.known_good), "%s", version);
	snprintf(plan.image, sizeof(plan.image), "/%s", BCI_DEPLOY_IMAGE_PATH);
	plan.image_size = image.size;
	snprintf(plan.image_sha256, sizeof(plan.image_sha256), "%s", image.sha256);
	snprintf(plan.deploy_id, sizeof(plan.deploy_id), "%s", d.deploy_id);
	snprintf(plan.loader, sizeof(plan.loader), "%s", BCI_DEPLOY_PLAN_LOADER);
	if ((ret = bci_deploy_plan_format(&plan, &text, err, err_size)) < 0)
		goto fail;
	if ((ret = bci_job_initrd_make(BCI_DEPLOY_PLAN_PATH, text, strlen(text), &plan_archive,
				       &plan_len)) < 0 ||
	    (ret = bci_job_initrd_frame(BCI_DEPLOY_IMAGE_PATH, (size_t)image.size, &head, &head_len,
					&out->tail, &out->tail_len)) < 0) {
		bci_message(err, err_size, "deploy initrd of %s: %s", machine, strerror(-ret));
		goto fail;
	}
	/* Two archives back to back, as the kernel reads several initrds. */
	out->head = malloc(plan_len + head_len);
	if (!out->head) {
		ret = -ENOMEM;
		goto fail;
	}
	memcpy(out->head, plan_archive, plan_len);
	memcpy(out->head + plan_len, head, head_len);
	out->head_len = plan_len + head_len;
	ret = 0;
	goto out;
fail:
	bci_deploy_initrd_clear(out);
out:
	free(text);
	free(plan_archive);
	free(head);
	return ret;
}

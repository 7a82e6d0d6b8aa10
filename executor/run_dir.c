// SPDX-License-Identifier: MIT
/*
 * Which run a boot belongs to. A run folder (runs/<run_id>) is resumed only
 * by the image that made it: the same kernel build, the same plan. Another
 * image booting with the same run_id (the next kernel of a CI queue, say)
 * must neither continue that run, mixing two kernels' results, nor find it
 * "already complete" and run nothing: the old folder is kept beside under a
 * new name and a fresh run starts. Nothing is deleted.
 *
 * The identity is bootci-identity.txt in the run folder, written before the
 * run's first file, compared line by line at every later boot.
 */
#include "executor.h"
#include "results_dir.h"
#include "executor_keys.h"
#include "fsutil.h"
#include "message.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IDENTITY_FILE BCI_RESULTS_IDENTITY

/* FNV-1a, 64 bits: tells files apart, nothing more is asked of it. */
static uint64_t fnv1a(const char *data, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)data[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The first line of ROOT/@rel, or "-" when it cannot be read. */
static void first_line(const struct bci_executor *ex, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX], *text = NULL;

	snprintf(buf, size, "-");
	if (bci_path(ex->root, path, "%s", rel) < 0 || bci_read_file(path, &text, NULL, 4096) < 0)
		return;
	text[strcspn(text, "\n")] = '\0';
	if (text[0])
		snprintf(buf, size, "%s", text);
	free(text);
}

/* What makes this boot's run what it is, one "key value" per line. */
static int identity(const struct bci_executor *ex, char *buf, size_t size)
{
	const struct bci_config *c = ex->config;
	const char *testlist = bci_config_get(c, "testlist");
	char version[256], image[256], plan[64] = "-";
	int n;

	first_line(ex, "/proc/sys/kernel/version", version, sizeof(version));
	first_line(ex, "/etc/bootci/image-id", image, sizeof(image));
	if (testlist[0]) {
		char path[PATH_MAX], *text = NULL;
		size_t len = 0;
		if (bci_path(ex->root, path, "%s", testlist) == 0 &&
		    bci_read_file(path, &text, &len, 64 << 20) == 0)
			snprintf(plan, sizeof(plan), "%016llx", (unsigned long long)fnv1a(text, len));
		free(text);
		n = snprintf(buf, size,
			     "kernel %s %s\nimage %s\ntestlist %s %s\ninclude %s\nexclude %s\n"
			     "multiple_mode %s\n",
			     ex->release, version, image, testlist, plan, bci_config_get(c, "include"),
			     bci_config_get(c, "exclude"), bci_config_get(c, "multiple_mode"));
	} else {
		n = snprintf(buf, size, "kernel %s %s\nimage %s\ntest %s\n", ex->release, version,
			     image, bci_config_get(c, "test"));
	}
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* The first line where @a and @b differ, for the console (into @buf). */
static void first_difference(const char *a, const char *b, char *buf, size_t size)
{
	while (*a && *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
		if (la != lb || memcmp(a, b, la) != 0)
			break;
		a += la + (a[la] == '\n');
		b += lb + (b[lb] == '\n');
	}
	snprintf(buf, size, "was '%.*s', now '%.*s'", (int)strcspn(a, "\n"), a,
		 (int)strcspn(b, "\n"), b);
}

int bci_run_dir_claim(struct bci_executor *ex)
{
	char id[8192], path[PATH_MAX + 64], aside[PATH_MAX + 64], why[1024], *old = NULL;
	int ret;

	ret = identity(ex, id, sizeof(id));
	if (ret < 0) {
		bci_error("run %s: its identity is too long to record", ex->run_dir);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/" IDENTITY_FILE, ex->run_dir);
	ret = bci_read_file(path, &old, NULL, sizeof(id));
	if (ret == 0 && strcmp(old, id) == 0) {
		free(old);
		return 0;
	}
	/* A run that has begun (boot records, a plan, a test's output) but is not ours. */
	bool begun = exists(ex->run_dir, BCI_RESULTS_BOOTCI_JOURNAL) || exists(ex->run_dir, BCI_RESULTS_JOBLIST) ||
		     exists(ex->run_dir, "test") || exists(ex->run_dir, "boot-0001");
	if (ret == 0 && begun) {
		first_difference(old, id, why, sizeof(why));
		for (unsigned n = 1;; n++) {
			snprintf(aside, sizeof(aside), "%s" BCI_EXECUTOR_SUPERSEDED "%u", ex->run_dir, n);
			if (access(aside, F_OK) < 0 && errno == ENOENT)
				break;
			if (n == 9999) {
				free(old);
				bci_error("run %s: no free name to keep it under", ex->run_dir);
				return -EEXIST;
			}
		}
		if (rename(ex->run_dir, aside) < 0 || bci_fsync_parent(aside) < 0) {
			ret = -errno;
			free(old);
			bci_error("run %s was made by another image and cannot be kept aside: %s",
				  ex->run_dir, bci_strerror(-ret));
			return ret;
		}
		bci_warn("run %s was made by another image (%s): kept as %s; a new run starts",
			 ex->run_dir, why, strrchr(aside, '/') + 1);
		ret = bci_mkdir_p(ex->run_dir, 0755);
		if (ret < 0) {
			free(old);
			bci_error("cannot create the run folder %s: %s", ex->run_dir, bci_strerror(-ret));
			return ret;
		}
	} else if (ret != -ENOENT && ret != 0) {
		bci_warn("run %s: cannot read its identity (%s): taking it as this image's",
			 ex->run_dir, bci_strerror(-ret));
	}
	free(old);
	/* A run begun before identities were recorded is taken as ours: nothing is lost. */
	ret = bci_write_file_atomic(path, id, strlen(id), 0644);
	if (ret < 0)
		bci_error("cannot write %s: %s", path, bci_strerror(-ret));
	return ret;
}

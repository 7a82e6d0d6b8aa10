// SPDX-License-Identifier: MIT
/*
 * Builds from series (patchwork.h, "build.c"): each series picked up and
 * not built yet has the project's build command run on it, one at a time,
 *
 *   COMMAND MBOX BASE BRANCH OUT
 *
 * without a shell, its stdout and stderr in DATA/series/NAME/ID/build.log,
 * in a process group of its own that is killed at build-timeout. OUT
 * (DATA/series/NAME/ID/image, emptied first) must then hold a
 * bootci-builder image folder (its manifest, fast.testlist, ...) and may
 * hold OUT/commit, the commit built (one line). The image is published as
 * `bootci-aggregator publish` does (bci_publish_dir()), registered as build
 * pw-NAME-ID with the series' name and Message-ID, so its fast tier is
 * queued. A series whose command exits BCI_PATCHWORK_EXIT_NO_APPLY does not
 * apply to the base; any other failure does not build: either way a
 * bootci-fast fail check is queued naming that, with the log's link, and
 * with DATA/mail.conf a reply saying so (fail_mail.c).
 *
 * When the command started and ended are recorded as the build's stages
 * (store.h, BCI_STAGE_BUILD_STARTED and _ENDED; a build run again replaces
 * them). A series is built once: it is done when its build is in the store or its
 * bootci-fast fail check is queued. A master stopped mid-build runs that
 * build again at its next poll. One builder at a time per series, across
 * processes (serve's poller and a `patchwork poll` by hand): each holds
 * DATA/series/NAME/ID/build.lock (flock) while it builds; another finding
 * it held leaves the series to it.
 */
#include "patchwork.h"

#include "../build_run.h"
#include "../names.h"
#include "../publish/publish.h"
#include "../store/store.h"
#include "fsutil.h"
#include "manifest.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct todo {
	int64_t series;
	char *name, *message_id, *build, *mbox, *submitter;
};

struct todo_list {
	struct todo *items;
	size_t count;
	int ret;
};

static int collect(const struct bci_store_pw_series *s, void *ctx)
{
	struct todo_list *list = ctx;
	struct todo *grown, *t;

	if (strcmp(s->state, "picked up") || !s->build || !s->mbox)
		return 0;
	grown = realloc(list->items, (list->count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	list->items = grown;
	t = &grown[list->count++];
	*t = (struct todo){ .series = s->series };
	if ((s->name && !(t->name = strdup(s->name))) ||
	    (s->message_id && !(t->message_id = strdup(s->message_id))) ||
	    (s->submitter && !(t->submitter = strdup(s->submitter))) ||
	    !(t->build = strdup(s->build)) || !(t->mbox = strdup(s->mbox)))
		return -ENOMEM;
	return 0;
}

static void todo_free(struct todo_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->items[i].name);
		free(list->items[i].message_id);
		free(list->items[i].build);
		free(list->items[i].mbox);
		free(list->items[i].submitter);
	}
	free(list->items);
}

static int build_seen(const struct bci_store_build *build, void *ctx)
{
	(void)build;
	(void)ctx;
	return 0;
}

static int fail_seen(const struct bci_store_pw_check *check, void *ctx)
{
	bool *failed = ctx;

	if (!strcmp(check->context, BCI_PATCHWORK_CONTEXT_FAST) && !strcmp(check->state, "fail"))
		*failed = true;
	return 0;
}

/* 1 when series @t is built or failed already, 0 when it is to build. */
static int done_already(struct bci_patchwork *pw, const struct todo *t, char *err, size_t err_size)
{
	bool failed = false;
	int ret = bci_store_build_get(pw->store, t->build, build_seen, NULL, err, err_size);

	if (ret == 0)
		return 1;
	if (ret != -ENOENT)
		return ret;
	ret = bci_store_pw_checks_series(pw->store, pw->project->name, t->series, fail_seen,
					 &failed, err, err_size);
	if (ret < 0)
		return ret;
	return failed;
}

/* Empties and removes @path (a folder the master made: no symlink followed). */
static void remove_tree(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/rm", "rm", "-rf", "--", path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

static double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The link to series @series's build log on serve, or "" without serve-url. */
static void log_url(struct bci_patchwork *pw, int64_t series, char *out, size_t size)
{
	if (!pw->project->serve_url) {
		out[0] = '\0';
		return;
	}
	snprintf(out, size, "%s/series/%s/%lld/build.log", pw->project->serve_url,
		 pw->project->name, (long long)series);
}

static int fail_check(struct bci_patchwork *pw, const struct todo *t, const char *why, char *err,
		      size_t err_size)
{
	char url[1400];
	int ret;

	log_url(pw, t->series, url, sizeof(url));
	ret = bci_store_pw_check_queue(pw->store, pw->project->name, t->series,
				       BCI_PATCHWORK_CONTEXT_FAST, "fail", why, url[0] ? url : NULL,
				       err, err_size);
	if (ret < 0)
		return ret;
	bci_patchwork_say(pw, "series %lld: %s: bootci-fast fail queued", (long long)t->series,
			  why);
	{
		struct bci_patchwork_failed f = {
			.series = t->series, .build = t->build, .name = t->name,
			.message_id = t->message_id, .submitter = t->submitter, .why = why,
			.log_url = url[0] ? url : NULL,
		};
		char merr[1024] = "";

		/* The check is what counts; a reply that cannot be made is said. */
		if (bci_patchwork_fail_mail(pw, &f, merr, sizeof(merr)) < 0)
			bci_patchwork_say(pw, "series %lld: its reply: %s", (long long)t->series,
					  merr);
	}
	return 0;
}

void bci_patchwork_read_commit(const char *path, int64_t series, char *out, size_t size)
{
	char *text = NULL;
	size_t len = 0;

	snprintf(out, size, "series-%lld", (long long)series);
	if (bci_read_file(path, &text, &len, 4096) < 0)
		return;
	len = strcspn(text, "\r\n");
	text[len] = '\0';
	if (len && len < size && bci_manifest_word_ok(text))
		memcpy(out, text, len + 1);
	free(text);
}

/*
 * Takes DATA/series/NAME/ID/build.lock: its fd (the lock held until it is
 * closed), -EWOULDBLOCK when another process builds the series, -errno.
 */
static int build_lock(struct bci_patchwork *pw, int64_t series, char *err, size_t err_size)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/series/%s/%lld/build.lock", pw->data_dir,
			     pw->project->name, (long long)series) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK)
			return -EWOULDBLOCK;
		bci_message(err, err_size, "%s: flock: %s", path, strerror(e));
		return -e;
	}
	return fd;
}

/* Records @name of @t's build now (its latency's stages): a failure is said, the build goes on. */
static void stage(struct bci_patchwork *pw, const struct todo *t, const char *name)
{
	char err[512];

	if (bci_store_build_stage_put(pw->store, t->build, name, unix_now(), 0, err,
				      sizeof(err)) < 0)
		bci_patchwork_say(pw, "series %lld: stage %s not recorded: %s",
				  (long long)t->series, name, err);
}

/*
 * The commit the project's branch is at as its series is built (git
 * ls-remote BASE BRANCH), into @dir/BCI_PATCHWORK_BASE_COMMIT_FILE: what a
 * bisection's candidates are built on, so a branch that moved meanwhile
 * does not change them. One that cannot be read is said, and the
 * candidates are built on the branch as it is then.
 */
static void base_commit_record(struct bci_patchwork *pw, const struct todo *t, const char *dir)
{
	const struct bci_patchwork_project *project = pw->project;
	const char *args[] = { "ls-remote", "--", project->base, project->branch, NULL };
	char path[PATH_MAX + 32], why[600], head[300], commit[80] = "", *out = NULL;
	int ret = bci_build_git(NULL, args, &out, why, sizeof(why));

	snprintf(head, sizeof(head), "%s%s", strncmp(project->branch, "refs/", 5) ? "refs/heads/" : "",
		 project->branch);
	/* "COMMIT<TAB>REF" a line: the branch's own, not a tag or a remote's of that name. */
	for (char *line = ret == 0 ? out : NULL; line && *line && !commit[0];) {
		size_t n = strcspn(line, "\n"), id = strcspn(line, "\t");

		if (id == 40 && id < n && strspn(line, "0123456789abcdef") == 40 &&
		    n - id - 1 == strlen(head) && !strncmp(line + id + 1, head, n - id - 1))
			snprintf(commit, sizeof(commit), "%.40s", line);
		line += n + (line[n] == '\n');
	}
	free(out);
	snprintf(path, sizeof(path), "%s/%s", dir, BCI_PATCHWORK_BASE_COMMIT_FILE);
	if (!commit[0]) {
		unlink(path);
		bci_patchwork_say(pw, "series %lld: the commit of %s %s is not known (git ls-remote:"
				  " %s): a bisection builds on the branch as it is then",
				  (long long)t->series, project->base, project->branch,
				  ret < 0 ? bci_strerror(-ret) : ret ? why : "no such branch");
		return;
	}
	strcat(commit, "\n");
	if ((ret = bci_write_file_atomic(path, commit, strlen(commit), 0644)) < 0)
		bci_patchwork_say(pw, "series %lld: %s: %s", (long long)t->series, path,
				  bci_strerror(-ret));
}

/* Builds one series: 1 built and published, 0 failed (its check queued), -errno. */
static int build_one(struct bci_patchwork *pw, const struct todo *t, char *err, size_t err_size)
{
	const struct bci_patchwork_project *project = pw->project;
	char dir[PATH_MAX], out[PATH_MAX], log_path[PATH_MAX], commit_path[PATH_MAX];
	char commit[128], why[600], perr[1024];
	char *argv[] = { project->build_command, t->mbox, project->base, project->branch, out, NULL };
	struct bci_build_outcome o;
	double started;
	int fd, ret;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/series/%s/%lld", pw->data_dir, project->name,
			     (long long)t->series) >= sizeof(dir) ||
	    (size_t)snprintf(out, sizeof(out), "%s/image", dir) >= sizeof(out) ||
	    (size_t)snprintf(log_path, sizeof(log_path), "%s/build.log", dir) >= sizeof(log_path) ||
	    (size_t)snprintf(commit_path, sizeof(commit_path), "%s/commit", out) >=
		    sizeof(commit_path))
		return -ENAMETOOLONG;
	remove_tree(out);
	if ((ret = bci_mkdir_p(out, 0755)) < 0) {
		bci_message(err, err_size, "%s: %s", out, bci_strerror(-ret));
		return ret;
	}
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		bci_message(err, err_size, "%s: %s", log_path, strerror(errno));
		return -errno;
	}
	base_commit_record(pw, t, dir);
	dprintf(fd, "bootci: %s %s %s %s %s\n", argv[0], argv[1], argv[2], argv[3], argv[4]);
	bci_patchwork_say(pw, "series %lld: building %s (%s %s %s %s %s), log %s",
			  (long long)t->series, t->build, argv[0], argv[1], argv[2], argv[3],
			  argv[4], log_path);
	started = now_monotonic();
	stage(pw, t, BCI_STAGE_BUILD_STARTED);
	ret = bci_build_run(argv, fd, project->build_timeout, pw->stop, &o, err, err_size);
	if (ret == 0 && !o.stopped)
		stage(pw, t, BCI_STAGE_BUILD_ENDED);
	if (ret == 0) {
		if (o.timed_out)
			dprintf(fd, "bootci: killed after build-timeout (%lu s)\n",
				project->build_timeout);
		else if (o.stopped)
			dprintf(fd, "bootci: killed: the master stops\n");
		else if (WIFEXITED(o.status))
			dprintf(fd, "bootci: exit status %d after %.0f s\n", WEXITSTATUS(o.status),
				now_monotonic() - started);
		else
			dprintf(fd, "bootci: killed by signal %d\n", WTERMSIG(o.status));
	}
	close(fd);
	if (ret < 0)
		return ret;
	if (o.stopped) {
		bci_message(err, err_size, "series %lld: the build was stopped: it runs again",
			    (long long)t->series);
		return -EINTR;
	}
	if (o.timed_out) {
		snprintf(why, sizeof(why), "does not build: killed after build-timeout (%lu s)",
			 project->build_timeout);
		return fail_check(pw, t, why, err, err_size);
	}
	if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == BCI_PATCHWORK_EXIT_NO_APPLY) {
		snprintf(why, sizeof(why), "does not apply to %s %s", project->base, project->branch);
		return fail_check(pw, t, why, err, err_size);
	}
	if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		if (WIFEXITED(o.status))
			snprintf(why, sizeof(why), "does not build: the build command exited %d",
				 WEXITSTATUS(o.status));
		else
			snprintf(why, sizeof(why), "does not build: the build command was killed"
				 " by signal %d", WTERMSIG(o.status));
		return fail_check(pw, t, why, err, err_size);
	}
	bci_patchwork_read_commit(commit_path, t->series, commit, sizeof(commit));
	{
		/* A Message-ID the reply could not carry is the series' fault, not the image's. */
		const char *message_id = t->message_id && bci_name_message_id_ok(t->message_id)
						 ? t->message_id : NULL;
		struct bci_publish p = {
			.build = t->build, .tree = project->tree, .commit = commit, .tier = "fast",
			.series_title = message_id ? (t->name ? t->name : t->build) : NULL,
			.message_id = message_id, .image_dir = out, .log = pw->log,
		};

		if (t->message_id && !message_id)
			bci_patchwork_say(pw, "series %lld: its Message-ID is not one ("
					  BCI_NAME_MESSAGE_ID_RULE "): build %s registered without"
					  " it, no reply", (long long)t->series, t->build);

		ret = bci_publish_dir(pw->store, pw->data_dir, &p, perr, sizeof(perr));
	}
	if (ret < 0) {
		fd = open(log_path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			dprintf(fd, "bootci: the image was not published: %s\n", perr);
			close(fd);
		}
		snprintf(why, sizeof(why), "does not build: its image was refused: %.400s", perr);
		return fail_check(pw, t, why, err, err_size);
	}
	bci_patchwork_say(pw, "series %lld: built and published as %s (tree %s, commit %s)",
			  (long long)t->series, t->build, project->tree, commit);
	return 1;
}

int bci_patchwork_build_pending(struct bci_patchwork *pw, unsigned *built, unsigned *failed,
				char *err, size_t err_size)
{
	struct todo_list list = { 0 };
	int ret = 0;

	*built = *failed = 0;
	if (!pw->project->build_command)
		return 0;
	ret = bci_store_pw_series_each(pw->store, pw->project->name, NULL, NULL, collect, &list,
				       err, err_size);
	for (size_t i = 0; ret >= 0 && i < list.count; i++) {
		const struct todo *t = &list.items[i];

		if (pw->stop && atomic_load(pw->stop))
			break;
		ret = done_already(pw, t, err, err_size);
		if (ret < 0)
			break;
		if (ret > 0) {
			ret = 0;
			continue;
		}
		int lock = build_lock(pw, t->series, err, err_size);

		if (lock == -EWOULDBLOCK) {
			bci_patchwork_say(pw, "series %lld: another process builds it: left to it",
					  (long long)t->series);
			ret = 0;
			continue;
		}
		if (lock < 0) {
			ret = lock;
			break;
		}
		/* Done while this waited for the lock's holder? */
		ret = done_already(pw, t, err, err_size);
		if (ret == 0)
			ret = build_one(pw, t, err, err_size);
		else if (ret > 0)
			ret = 2;
		close(lock);
		if (ret == 1)
			(*built)++;
		else if (ret == 0)
			(*failed)++;
	}
	todo_free(&list);
	if (ret < 0)
		bci_patchwork_say(pw, "builds: %s", err);
	return ret < 0 ? ret : 0;
}

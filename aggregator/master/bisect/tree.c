// SPDX-License-Identifier: MIT
/*
 * Bisecting a tree's build (bisect.h, "tree.c"), started by hand (`bisect
 * start BUILD`) once its fast tier and reruns have ended: the commits of
 * the tree's clone (machines.conf [tree NAME] repo) since its baseline
 * build, bisected by driver.c. What is a tree's own, here:
 *
 *   range    the baseline: the build's base when it has one, else the
 *            newest earlier build of its tree; either must have a commit
 *            that is an ancestor of the build's. The range: `git rev-list
 *            --first-parent --reverse GOOD..BAD` (merges are steps as a
 *            whole; the build's own commit is the last); kept in the row
 *   build    candidate K, the tree at the range's K-th commit, built by the
 *            tree's build-command (patchwork.conf's interface: an empty
 *            MBOX, BASE the repo, BRANCH the commit, OUT) into
 *            DATA/bisects/BUILD/K/ and published (not queued) as
 *            BUILD-cSHORT on tree TREE-bisect (its runs in no baseline)
 *   answer   the first bad commit (its hash, subject, author), not
 *            reproduced or inconclusive: a mail to the list threaded on the
 *            build's own message when it has one (mail.conf)
 *
 * serve_hook.c moves them on in a thread of serve's.
 */
#include "bisect.h"

#include "../build_run.h"
#include "../mail/mail.h"
#include "../publish/publish.h"
#include "../schedule/inventory.h"
#include "../store/store.h"
#include "fsutil.h"
#include "message.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether @word is a full commit ID (40 or 64 hex digits). */
static bool commit_id(const char *word)
{
	size_t n = strspn(word, "0123456789abcdef");

	return (n == 40 || n == 64) && word[n] == '\0';
}

/* ---- the tree's configuration ---- */

/*
 * machines.conf's [tree @tree] into *@inv and *@t: 0, -ENOENT naming what
 * is missing, -EAGAIN when it cannot be read now.
 */
static int tree_config(const char *data_dir, const char *tree, struct bci_inventory **inv,
		       const struct bci_inventory_tree **t, char *err, size_t err_size)
{
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_INVENTORY_FILE);
	/* One being edited (a syntax error) is said and read again next round. */
	if ((ret = bci_inventory_load(path, inv, err, err_size)) < 0)
		return ret == -ENOENT || ret == -ENOMEM ? ret : -EAGAIN;
	*t = bci_inventory_tree(*inv, tree);
	if (!*t || !(*t)->repo || !(*t)->build_command) {
		bci_message(err, err_size, "%s has no [tree %s] with a repo and a build-command: its"
			    " builds cannot be bisected", path, tree);
		return -ENOENT;
	}
	return 0;
}

/* ---- starting one ---- */

struct tree_build {
	char *name, *commit;
	double registered;
};

struct tree_builds {
	struct tree_build *v;
	size_t n;
};

static int tree_build_take(const struct bci_store_build *build, void *ctx)
{
	struct tree_builds *tb = ctx;
	struct tree_build *grown;

	if (!build->commit || !commit_id(build->commit))
		return 0;
	grown = realloc(tb->v, (tb->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	tb->v = grown;
	grown[tb->n] = (struct tree_build){ strdup(build->name), strdup(build->commit),
					    build->registered };
	tb->n++;
	return grown[tb->n - 1].name && grown[tb->n - 1].commit ? 0 : -ENOMEM;
}

static void tree_builds_free(struct tree_builds *tb)
{
	for (size_t i = 0; i < tb->n; i++) {
		free(tb->v[i].name);
		free(tb->v[i].commit);
	}
	free(tb->v);
}

/*
 * The baseline of @build (its base, else the newest earlier build of its
 * tree) whose commit is an ancestor of @bad: its name and commit, 1; 0 none.
 */
static int baseline(struct bci_store *store, const char *repo, const struct bci_store_build *build,
		    char *name, size_t name_size, char *good, size_t good_size, char *err,
		    size_t err_size)
{
	struct tree_builds tb = { 0 };
	char why[512];
	int ret = bci_store_tree_builds_each(store, build->tree, tree_build_take, &tb, err,
					     err_size);

	for (size_t pass = 0; ret >= 0 && pass < 2; pass++) {
		for (size_t i = 0; i < tb.n; i++) {
			const struct tree_build *c = &tb.v[i];
			const char *args[] = { "merge-base", "--is-ancestor", c->commit, build->commit,
					       NULL };

			/* The base first; then the others registered before it, newest first. */
			if (pass == 0 ? !build->base || strcmp(c->name, build->base)
				      : !strcmp(c->name, build->name) ||
					c->registered > build->registered ||
					!strcmp(c->commit, build->commit))
				continue;
			ret = bci_build_git(repo, args, NULL, why, sizeof(why));
			if (ret < 0) {
				bci_message(err, err_size, "%s: git merge-base: %s", repo,
					    bci_strerror(-ret));
				goto out;
			}
			/* 1: not an ancestor; anything else: git could not tell (no such repo, commit). */
			if (ret > 1) {
				bci_message(err, err_size, "%s: git merge-base --is-ancestor %.12s %.12s:"
					    " %s", repo, c->commit, build->commit,
					    why[0] ? why : "failed");
				ret = -EINVAL;
				goto out;
			}
			if (ret == 0 && strcmp(c->commit, build->commit)) {
				snprintf(name, name_size, "%s", c->name);
				snprintf(good, good_size, "%s", c->commit);
				ret = 1;
				goto out;
			}
			ret = 0;
		}
	}
out:
	tree_builds_free(&tb);
	return ret;
}

int bci_tree_bisect_start(struct bci_store *store, const char *data_dir, const char *build,
			  char *err, size_t err_size)
{
	struct bci_bisect_regressions r = { 0 };
	struct bci_store_build *b = NULL;
	struct bci_inventory *inv = NULL;
	const struct bci_inventory_tree *t = NULL;
	struct bci_strv commits = { 0 };
	char base[256] = "", good[80] = "", why[512], *range = NULL, *lines[4] = { NULL };
	int ret;

	if ((ret = bci_store_build_read(store, build, &b, err, err_size)) < 0)
		goto out;
	if (!b->commit || !commit_id(b->commit)) {
		bci_message(err, err_size, "build %s has no commit ID (%s): its tree's range is not"
			    " known", build, b->commit ? b->commit : "none");
		ret = -EINVAL;
		goto out;
	}
	if ((ret = tree_config(data_dir, b->tree, &inv, &t, err, err_size)) < 0)
		goto out;
	if ((ret = bci_bisect_ready(store, build, err, err_size)) <= 0) {
		if (ret == 0) {
			bci_message(err, err_size, "%s: its fast tier (and its reruns) have not ended",
				    build);
			ret = -EAGAIN;
		}
		goto out;
	}
	if ((ret = bci_bisect_regressions(store, data_dir, build, &r, err, err_size)) < 0)
		goto out;
	if (ret == 0 || !r.tests.count) {
		bci_message(err, err_size, "nothing to bisect: %s", ret == 0 ? "no run of it came back"
			    : "no possible new issue");
		goto out;
	}
	if ((ret = baseline(store, t->repo, b, base, sizeof(base), good, sizeof(good), err,
			    err_size)) <= 0) {
		if (ret == 0) {
			bci_message(err, err_size, "no earlier build of tree %s has a commit that %s"
				    " (in %s) descends from: no range to bisect", b->tree,
				    b->commit, t->repo);
			ret = -ENOENT;
		}
		goto out;
	}
	{
		char spec[200];
		const char *args[] = { "rev-list", "--first-parent", "--reverse", spec, "--", NULL };

		snprintf(spec, sizeof(spec), "%s..%s", good, b->commit);
		ret = bci_build_git(t->repo, args, &range, why, sizeof(why));
		if (ret > 0) {
			bci_message(err, err_size, "%s: git rev-list %s: %s", t->repo, spec, why);
			ret = -EINVAL;
		}
		if (ret < 0)
			goto out;
	}
	if ((ret = bci_strv_split(&commits, range, "\n")) < 0)
		goto out;
	for (size_t i = 0; i < commits.count; i++)
		if (!commit_id(commits.items[i])) {
			bci_message(err, err_size, "%s: git rev-list printed '%.80s', not a commit",
				    t->repo, commits.items[i]);
			ret = -EPROTO;
			goto out;
		}
	if (commits.count < 2 || strcmp(commits.items[commits.count - 1], b->commit)) {
		bci_message(err, err_size, "nothing to bisect: %zu commit(s) from %s (build %s) to %s"
			    " on the first-parent line", commits.count, good, base, b->commit);
		ret = commits.count < 2 ? 0 : -EINVAL;
		goto out;
	}
	lines[0] = bci_strv_lines(&r.tests);
	lines[1] = bci_strv_lines(&r.machines);
	lines[2] = bci_strv_lines(&r.pairs);
	lines[3] = bci_strv_lines(&commits);
	if (!lines[0] || !lines[1] || !lines[2] || !lines[3]) {
		ret = -ENOMEM;
		goto out;
	}
	struct bci_store_bisect row = {
		.build = build, .project = b->tree, .series = 0, .patches = (int)commits.count,
		.tests = lines[0], .machines = lines[1], .pairs = lines[2], .commits = lines[3],
	};
	if ((ret = bci_store_bisect_add(store, &row, err, err_size)) < 0)
		goto out;
	bci_message(err, err_size, "bisect %s: started: %zu commits since %s (build %s), %zu"
		    " test(s)", build, commits.count, good, base, r.tests.count);
	ret = 1;
out:
	for (size_t i = 0; i < 4; i++)
		free(lines[i]);
	bci_strv_free(&commits);
	free(range);
	bci_bisect_regressions_free(&r);
	bci_inventory_free(inv);
	free(b);
	return ret;
}

/* ---- the kind ---- */

struct tree_kind {
	const struct bci_bisector *bz;
	const struct bci_inventory_tree *tree;
	struct bci_store_build *build;		/* the build bisected */
};

static void candidate_name(void *ctx, const struct bci_bisection *b, int k, char *out,
			   size_t size)
{
	(void)ctx;
	snprintf(out, size, "%s-c%.12s", b->build, b->commits.items[k - 1]);
}

static int candidate_build(void *ctx, const struct bci_bisection *b, int k, const char *candidate,
			   char *why, size_t why_size, char *err, size_t err_size)
{
	struct tree_kind *tk = ctx;
	const struct bci_inventory_tree *t = tk->tree;
	const char *commit = b->commits.items[k - 1];
	char dir[PATH_MAX], mbox[PATH_MAX + 16], out[PATH_MAX + 16], log_path[PATH_MAX + 16];
	char tree[300], perr[1024];
	char *argv[] = { t->build_command, mbox, t->repo, (char *)commit, out, NULL };
	struct bci_build_outcome o;
	int fd, ret;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/bisects/%s/%d", tk->bz->data_dir, b->build, k) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(mbox, sizeof(mbox), "%s/empty.mbox", dir);
	snprintf(out, sizeof(out), "%s/image", dir);
	snprintf(log_path, sizeof(log_path), "%s/build.log", dir);
	bci_remove_tree(out);
	if ((ret = bci_mkdir_p(out, 0755)) < 0 ||
	    (ret = bci_write_file_atomic(mbox, "", 0, 0644)) < 0) {
		bci_message(err, err_size, "%s: %s", dir, bci_strerror(-ret));
		return ret;
	}
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", log_path, strerror(errno));
		return ret;
	}
	dprintf(fd, "bootci: bisect of %s, step: commit %d of %d: %s %s %s %s %s\n", b->build, k,
		b->patches, argv[0], argv[1], argv[2], argv[3], argv[4]);
	bci_bisector_say(tk->bz, "bisect %s: building %s (commit %d of %d, %.12s), log %s",
			 b->build, candidate, k, b->patches, commit, log_path);
	ret = bci_build_run(argv, fd, t->build_timeout, tk->bz->stop, &o, err, err_size);
	if (ret == 0 && WIFEXITED(o.status) && !o.timed_out && !o.stopped)
		dprintf(fd, "bootci: exit status %d\n", WEXITSTATUS(o.status));
	close(fd);
	if (ret < 0)
		return ret;
	if (o.stopped) {
		bci_message(err, err_size, "bisect %s: the build was stopped: it runs again", b->build);
		return -EINTR;
	}
	if (o.timed_out || !WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		if (o.timed_out)
			snprintf(why, why_size, "does not build: killed after build-timeout (%lu s)",
				 t->build_timeout);
		else
			snprintf(why, why_size, "does not build (its build.log says why)");
		return 0;
	}
	/* A tree of its own: a candidate's runs are in no later build's baseline. */
	snprintf(tree, sizeof(tree), "%s-bisect", b->project);
	struct bci_publish p = {
		.build = candidate, .tree = tree, .commit = commit, .tier = "fast",
		.base = tk->build->base, .image_dir = out, .no_queue = true,
	};
	if (bci_publish_dir(tk->bz->store, tk->bz->data_dir, &p, perr, sizeof(perr)) < 0) {
		snprintf(why, why_size, "its image was refused: %.400s", perr);
		return 0;
	}
	return 1;
}

/* Commit @k in a line: "HASH SUBJECT" (git log's), or the hash alone. */
static void describe(void *ctx, const struct bci_bisection *b, int k, char *out, size_t size)
{
	struct tree_kind *tk = ctx;
	const char *args[] = { "log", "-1", "--format=%H %s", b->commits.items[k - 1], "--", NULL };
	char why[256], *text = NULL;

	if (bci_build_git(tk->tree->repo, args, &text, why, sizeof(why)) == 0 && text[0])
		snprintf(out, size, "%.*s", (int)strcspn(text, "\n"), text);
	else
		snprintf(out, size, "%s", b->commits.items[k - 1]);
	free(text);
}

static int answer(void *ctx, const struct bci_bisection *b, const struct bci_bisect_steps *steps,
		  enum bci_bisect_next next, int k, const char *verdict, char *err,
		  size_t err_size)
{
	struct tree_kind *tk = ctx;
	struct bci_str mail = { 0 };
	char key[300], message_id[1024], why[256], *subject = NULL, *commit = NULL;
	int ret;

	bci_str_appendf(&mail, "bootci bisected the possible new issues of tree %s's build %s:\n\n",
			b->project, b->build);
	for (size_t i = 0; i < b->tests.count; i++)
		bci_str_appendf(&mail, "  %s\n", b->tests.items[i]);
	if (next == BCI_BISECT_FOUND) {
		const char *args[] = { "log", "-1", "--format=commit %H%nAuthor: %an <%ae>%nDate:   %aD%n%n    %s",
				       b->commits.items[k - 1], "--", NULL };

		bci_str_appendf(&mail, "\nFirst bad commit: %d of %d since its baseline\n", k,
				b->patches);
		if (bci_build_git(tk->tree->repo, args, &commit, why, sizeof(why)) == 0)
			bci_str_appendf(&mail, "%s", commit);
		else
			bci_str_appendf(&mail, "commit %s\n", b->commits.items[k - 1]);
	} else {
		bci_str_appendf(&mail, "\nNo commit is named: %s\n%s", verdict,
				next == BCI_BISECT_NOT_REPRODUCED
					? "A known-issue filter for the flaky test may be due"
					  " (bootci-known-issues(5)).\n" : "");
	}
	bci_str_appendf(&mail, "\nSteps (each candidate built with the tree's build-command, its"
			" runs on");
	for (size_t i = 0; i < b->machines.count; i++)
		bci_str_appendf(&mail, "%s %s", i ? "," : "", b->machines.items[i]);
	bci_str_appendf(&mail, "):\n");
	for (size_t i = 0; i < steps->n; i++)
		bci_str_appendf(&mail, "  %d. commit %d of %d, %.12s (%s): %s: %s\n",
				steps->v[i].step, steps->v[i].patches, b->patches,
				b->commits.items[steps->v[i].patches - 1], steps->v[i].candidate,
				steps->v[i].state, steps->v[i].note ? steps->v[i].note : "");
	if (!mail.data || asprintf(&subject, "bootci bisect: %s %s",
				   next == BCI_BISECT_FOUND ? "first bad commit of"
				   : next == BCI_BISECT_NOT_REPRODUCED ? "not reproduced for"
								       : "inconclusive for",
				   b->build) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(key, sizeof(key), "%s-bisect", b->build);
	struct bci_mail_note n = { .key = key, .in_reply_to = tk->build->message_id,
				   .subject = subject, .body = mail.data };
	char merr[1024] = "";

	/* The answer is in the store; a mail that cannot be made is said. */
	ret = bci_mail_note_queue(tk->bz->store, tk->bz->data_dir, &n, message_id,
				  sizeof(message_id), merr, sizeof(merr));
	if (ret < 0)
		bci_bisector_say(tk->bz, "bisect %s: its mail: %s", b->build, merr);
	else if (ret == 0 && message_id[0])
		bci_bisector_say(tk->bz, "bisect %s: mail %s queued", b->build, message_id);
	ret = 0;
out:
	(void)err;
	(void)err_size;
	bci_str_free(&mail);
	free(subject);
	free(commit);
	return ret;
}

/* ---- the round ---- */

int bci_tree_bisect_round(const struct bci_bisector *bz, unsigned *acted, char *err,
			  size_t err_size)
{
	struct bci_strv running = { 0 };
	int ret, first = 0;

	*acted = 0;
	ret = bci_bisect_running(bz->store, &running, err, err_size);
	for (size_t i = 0; ret >= 0 && i < running.count; i++) {
		struct bci_bisection b = { 0 };
		struct bci_inventory *inv = NULL;
		struct tree_kind tk = { 0 };
		struct bci_bisector one_bz = *bz;
		struct bci_bisect_kind kind = { .unit = "commit", .candidate = candidate_name,
						.build = candidate_build, .answer = answer,
						.describe = describe, .ctx = &tk };
		int one;

		if (bz->stop && atomic_load(bz->stop))
			break;
		one = bci_bisection_load(bz->store, running.items[i], &b, err, err_size);
		if (one > 0 && !bci_bisection_is_tree(&b))
			one = 0;	/* a series' (patchwork/bisect.c) */
		if (one > 0) {
			/* The tree's configuration as it is now (machines.conf is read each round). */
			one = tree_config(bz->data_dir, b.project, &inv, &tk.tree, err, err_size);
			if (one >= 0)
				one = bci_store_build_read(bz->store, b.build, &tk.build, err, err_size);
			if (one >= 0) {
				one_bz.inventory = inv;
				tk.bz = &one_bz;
				one = bci_bisect_move(&one_bz, &b, &kind, err, err_size);
			} else {
				bci_bisect_fault(bz, &b, one, err, err_size);
			}
		} else if (one < 0) {
			bci_bisector_say(bz, "bisect %s: %s", running.items[i], err);
		}
		*acted += one > 0;
		first = first || one == -EINTR ? first : one < 0 ? one : 0;
		free(tk.build);
		bci_inventory_free(inv);
		bci_bisection_free(&b);
	}
	bci_strv_free(&running);
	return ret < 0 ? ret : first;
}

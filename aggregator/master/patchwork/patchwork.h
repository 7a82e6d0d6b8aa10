/* SPDX-License-Identifier: MIT */
/*
 * The master follows Patchwork projects (Patchwork's REST API, version 1.2):
 * new complete series in, a build job recorded per series, checks out on
 * every patch of a series.
 *
 *   config.c      DATA/patchwork.conf, the projects followed (format below)
 *   parse.c       the API's JSON (a series page, a check list, a project) and
 *                 the Link header's next page: no network, fuzzed
 *   client.c      HTTP to Patchwork (libcurl): GET a page, an mbox, POST a check
 *   project.c     a project being followed: its client, its log lines, build names
 *   poll.c        one poll of a project: the token checked, series listing, pick-up
 *   check.c       checks queued in the store, posted once each
 *   build.c       the build command run on each series picked up, its image
 *                 published as the build
 *   tiers.c       the checks after the fast and full tiers
 *   fail_mail.c   the reply to a series that does not apply or build
 *   log_route.c   serve's GET /series/NAME/ID/build.log
 *   serve_hook.c  the poller thread inside `bootci-aggregator serve`
 *   command.c     `bootci-aggregator patchwork poll|check|series`
 *
 * DATA/patchwork.conf:
 *
 *   # comment (whole lines only); blank lines ignored
 *   [project NAME]                NAME: a word, the project's name in the store
 *                                 and in DATA/series/NAME/
 *   url = http://127.0.0.1:8000   required: Patchwork's base (http or https);
 *                                 the API is URL/api/1.2/
 *   project = intel-gfx           optional: the project's linkname (default NAME)
 *   token-file = /etc/bootci/pw   required, absolute: the REST token (one line);
 *                                 its user must be a maintainer of the project
 *                                 for Patchwork to take checks
 *   poll = 5m                     optional (default 5m): time between polls
 *                                 (a duration: seconds, or with s, m or h;
 *                                 a second to a day)
 *   serve-url = http://ci:8080    optional: serve's base URL; a check links to
 *                                 SERVE-URL/builds/BUILD (else no link)
 *   mbox-limit = 64M              optional (default 64M): a larger series mbox
 *                                 is not fetched (the series is skipped)
 *   first-series = 1200           optional (default 0): series with a lower id
 *                                 are never picked up (a project followed late)
 *   build-command = /usr/lib/x    optional, absolute, run without a shell: builds
 *                                 each series picked up (build.c); without it
 *                                 series are picked up and not built
 *   base = /srv/linux.git         required with build-command: the tree the
 *                                 series apply to (a path or URL, given to the
 *                                 command)
 *   branch = drm-tip              optional (default master): the base's branch
 *   tree = drm-tip                optional (default NAME): the builds' tree in
 *                                 the store (machines.conf's [tree NAME])
 *   build-timeout = 1h            optional (default 1h): a build running
 *                                 longer is killed and said
 *
 * Everything is strict: an unknown section or key, a key twice, a project
 * twice, a missing required key or a bad value is an error naming the line.
 *
 * What the store keeps (store.h, "Patchwork"): per project the watermark
 * (every series at or below it is settled: picked up, superseded or
 * skipped), each settled series with its patches, and each check with its
 * posting state. A series is settled once; a check (patch, context, state)
 * is posted once: it is queued in the store first, taken by one poster
 * ("posting") before the POST and "posted" after Patchwork's 201; one sent
 * without a clear answer ("unknown"), or left "posting" by a poster that
 * stopped, is read back from Patchwork before any new POST.
 *
 * Functions return 0 (or a count) on success and -errno on failure with a
 * message in @err; they never print: what happens is said on the @log the
 * caller gives (one line each).
 */
#ifndef BCI_PATCHWORK_H
#define BCI_PATCHWORK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bci_store;

#define BCI_PATCHWORK_CONFIG_FILE "patchwork.conf"
#define BCI_PATCHWORK_POLL_DEFAULT 300
#define BCI_PATCHWORK_MBOX_LIMIT_DEFAULT (64ULL << 20)
/* The largest API answer read (one page of series, a project). */
#define BCI_PATCHWORK_PAGE_LIMIT (8U << 20)
/*
 * A check "posting" for longer than this was left by a poster that stopped
 * mid-POST: it is looked for on Patchwork and posted again if absent. Above
 * a request's timeout (client.c).
 */
#define BCI_PATCHWORK_STALE 300
/* A build command running longer is killed. */
#define BCI_PATCHWORK_BUILD_TIMEOUT_DEFAULT 3600
/* The build command's exit status when the series does not apply to the base. */
#define BCI_PATCHWORK_EXIT_NO_APPLY 3
/* Series asked for per page of the listing. */
#define BCI_PATCHWORK_PER_PAGE 50

/* ---- config.c ---- */

struct bci_patchwork_project {
	char *name;		/* the section's NAME */
	char *url;		/* Patchwork's base, without a trailing '/' */
	char *linkname;
	char *token_file;
	unsigned long poll;	/* seconds */
	char *serve_url;	/* NULL: checks carry no link */
	unsigned long long mbox_limit;
	int64_t first_series;
	char *build_command;	/* NULL: series are not built */
	char *base, *branch;	/* the tree and branch series apply to (base NULL: none) */
	char *tree;		/* the builds' tree in the store */
	unsigned long build_timeout;	/* seconds */
	unsigned line;		/* the section's line, for messages */
};

struct bci_patchwork_config {
	struct bci_patchwork_project *projects;
	size_t project_count;
};

/* Parses @len bytes of @text (@origin names it in messages) into *@out, owned by the caller. */
int bci_patchwork_config_parse(const char *origin, const char *text, size_t len,
			       struct bci_patchwork_config **out, char *err, size_t err_size);
/* Reads @path: -ENOENT (no message) when there is none. */
int bci_patchwork_config_load(const char *path, struct bci_patchwork_config **out, char *err,
			      size_t err_size);
void bci_patchwork_config_free(struct bci_patchwork_config *config);
/* The project named @name, or NULL. */
const struct bci_patchwork_project *
bci_patchwork_config_project(const struct bci_patchwork_config *config, const char *name);

/* ---- parse.c: the API's JSON ---- */

/* One series of a listing page (GET /api/1.2/series/); its strings are its own. */
struct bci_patchwork_series {
	int64_t id;
	char *name;		/* Patchwork's name (the cover's subject, prefixes cut), or NULL */
	int version;
	char *date;		/* as Patchwork gives it (ISO 8601, UTC) */
	char *submitter;	/* the submitter's email, or NULL */
	char *mbox;		/* the series' mbox URL, or NULL */
	char *message_id;	/* the cover letter's Message-ID, else the first patch's, or NULL */
	bool received_all;
	int total;
	int64_t *patches;	/* patch ids in the series' order */
	size_t patch_count;
	/*
	 * When the series was complete on Patchwork (Unix seconds): the latest
	 * date of its patches, else its own date, else -1. Its own date is its
	 * first message's (Patchwork's series date): a series is complete when
	 * its last patch is in, and the time its sender took to send the rest
	 * (a list delivers a 30-patch series over minutes) is no CI's. Patchwork's
	 * dates are the mails' Date headers in UTC (its own clock only for a mail
	 * without one): the sender's clock.
	 */
	double complete;
};

void bci_patchwork_series_clear(struct bci_patchwork_series *series);
void bci_patchwork_series_free_all(struct bci_patchwork_series *series, size_t count);

/*
 * Parses a page of the series listing (a JSON array) and appends its series
 * to *@series (realloc'ed; *@count updated). A page that is not an array of
 * series objects with an integer id is -EBADMSG naming what is wrong; other
 * fields missing or of another type are taken as absent.
 */
int bci_patchwork_series_parse(const char *json, size_t len, struct bci_patchwork_series **series,
			       size_t *count, char *err, size_t err_size);

/*
 * A date as Patchwork's API gives it, UTC without a zone
 * ("2026-12-06T11:25:07", maybe ".123456" after the seconds; a "Z" or
 * "+00:00" is taken too), into *@out (Unix seconds). -EINVAL for anything
 * else.
 */
int bci_patchwork_date_parse(const char *text, double *out);

/*
 * A check list (GET /api/1.2/patches/ID/checks/, a JSON array): 1 when it
 * holds a check of @context in @state, 0 when not, -EBADMSG when it is no
 * list of objects.
 */
int bci_patchwork_checks_has(const char *json, size_t len, const char *context, const char *state,
			     char *err, size_t err_size);

/*
 * A project (GET /api/1.2/projects/LINKNAME/): its maintainers' user ids into
 * *@ids (malloc'ed, *@count of them). -EBADMSG when it is no project object.
 */
int bci_patchwork_project_maintainers(const char *json, size_t len, int64_t **ids, size_t *count,
				      char *err, size_t err_size);

/*
 * The target of rel="next" in a Link header's value (RFC 8288:
 * `<URL>; rel="next", <URL>; rel="prev"`) into @next: 1 found, 0 none,
 * -EBADMSG for a malformed header, -ENAMETOOLONG when it does not fit.
 */
int bci_patchwork_link_next(const char *header, char *next, size_t next_size);

/* ---- client.c: HTTP ---- */

struct bci_patchwork_client;

/* A client of @project, reading its token file: -errno with @err naming the file. */
int bci_patchwork_client_new(const struct bci_patchwork_project *project,
			     struct bci_patchwork_client **out, char *err, size_t err_size);
void bci_patchwork_client_free(struct bci_patchwork_client *client);

struct bci_patchwork_reply {
	long status;		/* HTTP status; 0 when no answer came */
	char *body;		/* malloc'ed, NUL-terminated (may be NULL with status 0) */
	size_t len;
	char next[2048];	/* the Link header's next page, or "" */
	bool sent;		/* false: the request never reached the server (refused, no route) */
};

void bci_patchwork_reply_clear(struct bci_patchwork_reply *reply);

/*
 * @method ("GET", "POST", "PATCH") of @url (absolute) with @json_body (may be
 * NULL) and the token, reading at most @limit bytes of answer. 0 when an
 * answer came (any status: the caller judges it), -ECONNREFUSED or -EIO
 * (no answer or a cut one: @err says what libcurl said), -EFBIG when the
 * answer was larger than @limit.
 */
int bci_patchwork_request(struct bci_patchwork_client *client, const char *method, const char *url,
			  const char *json_body, size_t limit, struct bci_patchwork_reply *reply,
			  char *err, size_t err_size);

/* GET @url into the file @path (atomically), at most @limit bytes: as above; 404 etc. in *@status. */
int bci_patchwork_download(struct bci_patchwork_client *client, const char *url, const char *path,
			   unsigned long long limit, long *status, char *err, size_t err_size);

/* The API's base, "URL/api/1.2". */
const char *bci_patchwork_client_api(const struct bci_patchwork_client *client);

/* ---- poll.c, check.c: following a project ---- */

/* A project being followed: its config, client, store and log (all borrowed but the client). */
struct bci_patchwork {
	const struct bci_patchwork_project *project;
	struct bci_patchwork_client *client;
	struct bci_store *store;
	const char *data_dir;
	FILE *log;		/* one line per event; may be NULL */
	bool rights_checked;
	const atomic_bool *stop;	/* NULL, or true when serve stops: a build is killed */
	/*
	 * true: a poll builds nothing, another thread runs
	 * bci_patchwork_build_pending() (serve's builder), so that a build, as
	 * long as a kernel's, never holds the polls back.
	 */
	bool builds_apart;
};

int bci_patchwork_open(struct bci_patchwork *pw, const struct bci_patchwork_project *project,
		       struct bci_store *store, const char *data_dir, FILE *log, char *err,
		       size_t err_size);
void bci_patchwork_close(struct bci_patchwork *pw);

/* Says on the log "patchwork NAME: ..." */
void bci_patchwork_say(struct bci_patchwork *pw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Checks the token against the project once: Patchwork answers, the project
 * exists, the token is accepted (else 401/403 is said) and its user is one of
 * the project's maintainers (else: checks will be refused with 403). 0 when
 * all is well, -EACCES when the token lacks rights (said on the log), another
 * -errno when Patchwork could not tell.
 */
int bci_patchwork_check_rights(struct bci_patchwork *pw, char *err, size_t err_size);

/* What one poll did. */
struct bci_patchwork_poll_counts {
	unsigned seen;		/* series above the watermark */
	unsigned picked;	/* picked up now */
	unsigned waiting;	/* incomplete, or a fault to retry */
	unsigned superseded;
	unsigned skipped;	/* no mbox, or over the limit */
	unsigned checks_posted;
	unsigned checks_waiting;
	unsigned built;		/* series built and published (build.c) */
	unsigned build_failed;	/* series that did not apply or build */
	unsigned tier_checks;	/* checks queued after a tier ended (tiers.c) */
};

/*
 * One poll: the new series above the watermark, each complete one picked up
 * (its mbox in DATA/series/NAME/ID/series.mbox, a build job recorded, when
 * it was complete recorded as its build's BCI_STAGE_SERIES, a pending
 * bootci-fast check queued on each patch) and the checks queued posted at
 * once, then with a build-command every series picked up and not built yet
 * built (bci_patchwork_build_pending(); not with builds_apart), the checks
 * after the tiers queued (bci_patchwork_tiers()), then every queued check
 * posted. A fault (Patchwork down, a 5xx, garbage) stops the poll with what
 * was settled kept: 0 when the poll went through, -errno with @err said too.
 */
int bci_patchwork_poll(struct bci_patchwork *pw, struct bci_patchwork_poll_counts *counts,
		       char *err, size_t err_size);

/* The build name of series @series of @project: "pw-NAME-ID". */
int bci_patchwork_build_name(const struct bci_patchwork_project *project, int64_t series,
			     char *out, size_t size);

#define BCI_PATCHWORK_CONTEXT_FAST "bootci-fast"
#define BCI_PATCHWORK_CONTEXT_FULL "bootci-full"
#define BCI_PATCHWORK_CONTEXT_BISECT "bootci-bisect"
/* DATA/series/NAME/ID/base-commit: the commit the branch was at when the series was built. */
#define BCI_PATCHWORK_BASE_COMMIT_FILE "base-commit"

/*
 * Check @context in @state (pending|success|warning|fail) on every patch of
 * @series (one the store has picked up): queued in the store once (asking
 * again adds nothing), then every queued check of the project posted.
 * @description and @target_url may be NULL. Returns the number of checks
 * posted now; the ones Patchwork could not take stay queued for the next
 * poll (-errno with @err when none could be posted because of a fault).
 * Any thread or process may call it with its own struct bci_patchwork and
 * store connection while serve's poller runs: each check is taken by one
 * poster (bci_store_pw_check_claim()).
 */
int bci_patchwork_check(struct bci_patchwork *pw, int64_t series, const char *context,
			const char *state, const char *description, const char *target_url,
			char *err, size_t err_size);

/* Posts every queued check of the project: the number posted, or -errno on a fault. */
int bci_patchwork_checks_flush(struct bci_patchwork *pw, unsigned *waiting, char *err,
			       size_t err_size);

/* ---- build.c: builds from series, checks after the tiers ---- */

/*
 * Runs the build command on each series picked up and not built yet, one at
 * a time (the format above build.c): its image published and registered as
 * the series' build, or a bootci-fast fail check queued naming why (does not
 * apply, does not build, timed out, image refused). Counts in *@built and
 * *@failed; -errno on a store fault or when serve stops mid-build.
 */
int bci_patchwork_build_pending(struct bci_patchwork *pw, unsigned *built, unsigned *failed,
				char *err, size_t err_size);

/* The first line of @path, the commit a build command built, into @out; "series-ID" when none. */
void bci_patchwork_read_commit(const char *path, int64_t series, char *out, size_t size);

/* A series that did not apply or build, for its reply (fail_mail.c). */
struct bci_patchwork_failed {
	int64_t series;
	const char *build;		/* pw-NAME-ID: the outbox keeps one message a build */
	const char *name, *message_id, *submitter;	/* each may be NULL */
	const char *why;		/* "does not apply to BASE BRANCH", ... */
	const char *log_url;		/* may be NULL */
};

/* A message of the master's own to a series (fail_mail.c). */
struct bci_patchwork_mail {
	int64_t series;
	const char *key;		/* the outbox's build key: one message each */
	const char *message_id;		/* the series' (In-Reply-To), may be NULL */
	const char *submitter;		/* may be NULL */
	const char *subject;		/* its text (encoded as RFC 2047 needs) */
	const char *body;		/* plain text, UTF-8 */
};

/*
 * With DATA/mail.conf, queues @m to the list and the submitter, threaded on
 * the series' Message-ID: 0 queued (or no mail.conf, or nobody to send it
 * to), 1 when the outbox holds a message of @m->key already, -errno.
 */
int bci_patchwork_mail_queue(struct bci_patchwork *pw, const struct bci_patchwork_mail *m,
			     char *err, size_t err_size);

/* The reply saying @f->why with the log's link, as bci_patchwork_mail_queue() queues it. */
int bci_patchwork_fail_mail(struct bci_patchwork *pw, const struct bci_patchwork_failed *f,
			    char *err, size_t err_size);

/*
 * The checks after the tiers (tiers.c): for each series whose build is
 * registered, bootci-fast success|warning|fail with the report's one-line
 * summary and the matrix's link once the fast tier's jobs have all ended
 * (done or abandoned), bootci-full likewise once the full tier's have, or
 * bootci-full fail "full: not run: fast tier failed", or "full: not run:
 * WHY" when the scheduler's gate skipped it. Each queued once;
 * the number queued now in *@queued.
 */
int bci_patchwork_tiers(struct bci_patchwork *pw, unsigned *queued, char *err, size_t err_size);

/* ---- bisect.c: a series' possible new issues bisected to the first bad patch ---- */

/*
 * One round of the project's bisections (the format above bisect.c): each
 * series due one started (its fast tier ended, its gate decided, more than
 * one patch; unless machines.conf's bisect-steps is 0), each running one
 * moved on as far as it goes now (a candidate built, its runs queued or
 * judged, the answer told). Needs DATA/machines.conf (none: nothing to
 * run, nothing done). How many it moved in *@acted; -errno (said too).
 */
int bci_patchwork_bisect_round(struct bci_patchwork *pw, unsigned *acted, char *err,
			       size_t err_size);
/*
 * Starts the bisection of series build @build now: 1 started, 0 when it
 * has nothing to bisect (recorded as done so), -ENOENT for a build that is
 * no series', -EEXIST when it has one already; @by_hand: -EINVAL for a
 * series of one patch and -EAGAIN while its fast tier runs (else 0).
 */
int bci_patchwork_bisect_start(struct bci_patchwork *pw, const char *build, bool by_hand,
			       char *err, size_t err_size);

/* ---- serve_hook.c: the poller inside serve ---- */

struct bci_patchwork_server;

/*
 * Starts the poller on DATA/patchwork.conf (0 and *@out NULL when there is
 * none: Patchwork is not followed), with its own store connection. Each
 * project is polled every its poll interval; $BOOTCI_PATCHWORK_POLL (a
 * duration) overrides every project's, for tests.
 */
int bci_patchwork_server_start(const char *data_dir, const char *store_url, FILE *log,
			       struct bci_patchwork_server **out, char *err, size_t err_size);
void bci_patchwork_server_stop(struct bci_patchwork_server *server);

#endif

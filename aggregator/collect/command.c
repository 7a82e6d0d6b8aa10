// SPDX-License-Identifier: MIT
/*
 * bootci-collect: what the known-good image runs (the executor's
 * `test` program there). Every run on the results partition that is over and
 * not yet uploaded goes to the master as one archive; a run in progress is
 * asked about (the master may have ended it at its boot cap: then it is
 * marked ended and goes too, as it is, incomplete); a run leaves the
 * partition only once the master confirmed its exact bytes, and only as the
 * retention setting says. Whatever cannot be uploaded now stays for the next
 * boot of the known-good image. The executor ends the boot afterwards
 * (on_finish: reboot into the boot order, or power off).
 *
 * Exit status: 0 every run that is over is uploaded (or there was none), 1 some
 * stay on the partition (message on the console), 2 usage, 3 the master holds
 * the machine out of its schedule, e.g. on its boot fault note (the
 * known-good image's executor powers off: test_poweroff_status=3).
 */
#include "collect.h"

#include "message.h"

#include "config.h"
#include "fsutil.h"
#include "manifest.h"
#include "run_archive.h"
#include "sha256.h"
#include "version.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONFIG "/etc/bootci/collect.conf"
#define DEFAULT_CMDLINE "/proc/cmdline"
#define CMDLINE_PREFIX "bootci_collect."
#define EXIT_TAKEN_OUT 3

struct collect {
	struct bci_config *config;
	FILE *console;
	struct bci_collect_machine machine;
	char results[PATH_MAX], runs[PATH_MAX], outgoing[PATH_MAX];
	char *exclude_storage;
	const char **exclude;
	size_t exclude_count;
	long long deadline;
	unsigned uploaded, left, refused;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bootci-collect [--config FILE] [--cmdline FILE] [--results DIR]\n"
		"         [--master URL] [--ca-file FILE] [--machine-file FILE] [--keep N] [--deadline DURATION]\n"
		"         [--exclude RUN,...] [--max-rate BYTES] [--console PATH] [--no-efi] [--root DIR]\n"
		"Settings: %s, then " CMDLINE_PREFIX "<key>=<value> in %s, then the options.\n",
		DEFAULT_CONFIG, DEFAULT_CMDLINE);
	for (const struct bci_config_key *k = bci_collect_keys; k->name; k++)
		fprintf(out, "  %-13s %s (default '%s')\n", k->name, k->help, k->default_value);
}

/* The image's file, then the kernel command line; an absent default file is no error. */
static int load_settings(struct collect *c, const char *config_path, bool config_given,
			 const char *cmdline_path, char *err, size_t err_size)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = bci_read_file(config_path, &text, &len, 1 << 20);
	if (ret == 0) {
		ret = bci_config_parse_file(c->config, config_path, text, len, err, err_size);
		free(text);
		if (ret < 0)
			return ret;
	} else if (ret != -ENOENT || config_given) {
		bci_message(err, err_size, "%s: %s", config_path, strerror(-ret));
		return ret;
	}
	text = NULL;
	ret = bci_read_file(cmdline_path, &text, &len, 1 << 20);
	if (ret == 0) {
		ret = bci_config_parse_cmdline(c->config, text, CMDLINE_PREFIX, err, err_size);
		free(text);
		return ret;
	}
	return ret == -ENOENT ? 0 : ret;
}

static bool excluded(const struct collect *c, const char *run)
{
	for (size_t i = 0; i < c->exclude_count; i++)
		if (!strcmp(c->exclude[i], run))
			return true;
	return false;
}

/* bci_collect_runs_settle()'s view of the exclusion (the known-good image's own run). */
static bool excluded_cb(const char *run, void *ctx)
{
	return excluded(ctx, run);
}

/*
 * RESULTS/outgoing/<run>.tar.zst and its digest: made once, kept until the
 * master confirmed them, so a resumed upload (even after a reboot) sends the
 * rest of the same bytes. The .sha256 is written after the archive is
 * complete and durable: an archive without it is a leftover, made again.
 */
static int outgoing_prepare(struct collect *c, const char *run, char *archive, char *digest,
			    uint64_t *size, char *err, size_t err_size)
{
	char run_dir[PATH_MAX], digest_path[PATH_MAX], *text = NULL, line[128];
	struct bci_run_archive_info info = {
		.machine = c->machine.name,
		.run = run,
		.bootci_version = BCI_VERSION,
		.efi_read = strcmp(bci_config_get(c->config, "efi"), "yes") == 0 ? bci_collect_efi_read : NULL,
	};
	int ret;

	if (bci_collect_path(run_dir, sizeof(run_dir), "%s/%s", c->runs, run) < 0 ||
	    bci_collect_path(archive, PATH_MAX, "%s/%s.tar.zst", c->outgoing, run) < 0 ||
	    bci_collect_path(digest_path, sizeof(digest_path), "%s/%s.sha256", c->outgoing, run) < 0) {
		bci_message(err, err_size, "%s: path too long", run);
		return -ENAMETOOLONG;
	}
	if (bci_read_file(digest_path, &text, NULL, 4096) == 0) {
		char kept[BCI_SHA256_HEX] = "";

		/* The digest file names the archive's digest; the archive must still match it. */
		if (sscanf(text, "%64s", kept) == 1 && bci_sha256_file(archive, digest, size) == 0 &&
		    !strcmp(kept, digest)) {
			free(text);
			fprintf(c->console, "collect: run %s: archive kept from an earlier boot (%llu bytes)\n",
				run, (unsigned long long)*size);
			return 0;
		}
		free(text);
		fprintf(c->console, "collect: run %s: the kept archive does not match its digest: made again\n",
			run);
	}
	ret = bci_mkdir_p(c->outgoing, 0700);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", c->outgoing, strerror(-ret));
		return ret;
	}
	ret = bci_run_archive_write(run_dir, archive, &info, err, err_size);
	if (ret < 0)
		return ret;
	ret = bci_sha256_file(archive, digest, size);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", archive, strerror(-ret));
		return ret;
	}
	snprintf(line, sizeof(line), "%s\n", digest);
	ret = bci_write_file_atomic(digest_path, line, strlen(line), 0600);
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", digest_path, strerror(-ret));
	return ret;
}

static void outgoing_remove(struct collect *c, const char *run)
{
	char path[PATH_MAX];

	if (bci_collect_path(path, sizeof(path), "%s/%s.sha256", c->outgoing, run) == 0)
		unlink(path);
	if (bci_collect_path(path, sizeof(path), "%s/%s.tar.zst", c->outgoing, run) == 0)
		unlink(path);
	bci_fsync_dir(c->outgoing);
}

/* A run that is over and not yet uploaded, with its archive once made. */
struct pending {
	const struct bci_collect_run *run;
	bool archived;
	char archive[PATH_MAX], digest[BCI_SHA256_HEX];
	uint64_t size;
};

static int archive_run(struct collect *c, struct pending *p)
{
	char err[1024] = "";
	int ret;

	fprintf(c->console, "collect: run %s (%s): archiving\n", p->run->name,
		bci_collect_run_state_name(p->run->state));
	ret = outgoing_prepare(c, p->run->name, p->archive, p->digest, &p->size, err, sizeof(err));
	if (ret < 0)
		fprintf(c->console, "collect: run %s: cannot archive it: %s; it stays\n", p->run->name,
			err);
	p->archived = ret == 0;
	return ret;
}

/* MASTER/api/v1/machines/<machine>/@what into @url (PATH_MAX * 2 bytes). */
static void master_url(const struct collect *c, char *url, const char *what)
{
	const char *master = bci_config_get(c->config, "master");
	size_t master_len = strlen(master);

	while (master_len && master[master_len - 1] == '/')
		master_len--;
	snprintf(url, PATH_MAX * 2, "%.*s/api/v1/machines/%s/%s", (int)master_len, master,
		 c->machine.name, what);
}

/*
 * The master holds this run under another digest. What it holds is asked
 * for: when every file here is in its copy, byte for byte, this is the run it
 * holds, with files gone (a deletion an older collect did not finish): it is
 * marked uploaded with the master's digest and retention finishes it. Else it
 * is another run under the same id: marked refused, said once, kept, and not
 * sent again. Returns 0 settled either way, -errno when the master's copy
 * could not be read (tried again at the next boot).
 */
static int held_settle(struct collect *c, const struct pending *p,
		       const struct bci_collect_upload *upload, const char *run_dir)
{
	struct bci_collect_held held;
	struct bci_run_archive *archive = NULL;
	char err[1024] = "", why[1024] = "";
	int ret, same = 0;

	ret = bci_collect_master_held(upload, &held, err, sizeof(err));
	if (ret < 0) {
		fprintf(c->console, "collect: run %s: the master holds another archive of it, and"
				    " what it holds cannot be read: %s; it stays on the partition\n",
			p->run->name, err);
		return ret;
	}
	ret = bci_run_archive_open(p->archive, NULL, &archive, err, sizeof(err));
	if (ret < 0) {
		fprintf(c->console, "collect: run %s: %s: %s; it stays on the partition\n",
			p->run->name, p->archive, err);
		goto out;
	}
	const struct bci_manifest *local = bci_run_archive_manifest(archive);
	same = bci_collect_run_recognise(held.manifest, local, why, sizeof(why));
	if (same) {
		ret = bci_collect_run_mark_uploaded(run_dir, held.sha256, held.size, 0);
		if (ret == 0)
			fprintf(c->console, "collect: run %s: the master holds it already (sha256 %s):"
					    " its %zu file(s) here are %zu of the master's copy, byte for"
					    " byte (a deletion cut short); marked uploaded\n",
				p->run->name, held.sha256, local->file_count,
				held.manifest->file_count);
	} else {
		ret = bci_collect_run_mark_refused(run_dir, why, p->digest, held.sha256,
						   (long long)time(NULL));
		if (ret == 0)
			fprintf(c->console, "collect: run %s refused: the master holds another run"
					    " under this id (sha256 %s): %s; kept on the partition and"
					    " not sent again (%s/%s says why)\n",
				p->run->name, held.sha256, why, run_dir, BCI_COLLECT_REFUSED_FILE);
	}
	if (ret < 0)
		fprintf(c->console, "collect: run %s: %s/%s cannot be written: %s\n", p->run->name,
			run_dir, same ? BCI_COLLECT_UPLOADED_FILE : BCI_COLLECT_REFUSED_FILE,
			strerror(-ret));
	else
		outgoing_remove(c, p->run->name);
	if (ret == 0 && !same)
		c->refused++;
out:
	bci_run_archive_close(archive);
	bci_manifest_free(held.manifest);
	return ret < 0 ? ret : same ? 0 : -EEXIST;
}

/*
 * A run in progress here may be over for the master: past its boot cap it
 * ends a run that a kernel crashing at every boot never lets the executor
 * end, and sends the machine here. Asked once per boot: when the master says
 * so, the run is marked ended (durably, before its archive) and uploads as
 * it is. true when it is over now.
 */
static bool ended_by_master(struct collect *c, struct bci_collect_run *run)
{
	char url[PATH_MAX * 2], what[PATH_MAX], run_dir[PATH_MAX], err[1024] = "";
	struct bci_collect_master_job job;
	struct bci_collect_upload ask = {
		.url = url,
		.token = c->machine.token,
		.ca_file = bci_config_get(c->config, "ca_file"),
	};
	int ret;

	snprintf(what, sizeof(what), "runs/%s", run->name);
	master_url(c, url, what);
	ret = bci_collect_master_job(&ask, &job, err, sizeof(err));
	if (ret < 0) {
		fprintf(c->console, "collect: run %s is in progress; the master cannot say whether it"
			" ended it (%s): left alone\n", run->name, err);
		return false;
	}
	if (ret == 0 || !job.ended) {
		fprintf(c->console, "collect: run %s is in progress%s: left alone\n", run->name,
			ret ? " (the master hands it out again)" : "");
		return false;
	}
	ret = bci_collect_path(run_dir, sizeof(run_dir), "%s/%s", c->runs, run->name);
	if (ret == 0)
		ret = bci_collect_run_mark_ended(run_dir, job.boots, job.note);
	if (ret < 0) {
		fprintf(c->console, "collect: run %s: the master ended it, but %s cannot be written"
			" (%s): left alone\n", run->name, BCI_COLLECT_ENDED_FILE, strerror(-ret));
		return false;
	}
	fprintf(c->console, "collect: run %s is in progress here, but the master ended it after %d"
		" boots (%s): uploaded as it is, incomplete\n", run->name, job.boots,
		job.note[0] ? job.note : "no verdict");
	run->state = BCI_RUN_ENDED;
	return true;
}

/*
 * Returns 0 uploaded (or recognised as the master's), -ETIMEDOUT the master
 * could not be reached in time, other -errno.
 */
static int upload_run(struct collect *c, const struct pending *p)
{
	char url[PATH_MAX * 2], what[PATH_MAX], run_dir[PATH_MAX], err[1024] = "";
	int ret;

	snprintf(what, sizeof(what), "runs/%s", p->run->name);
	master_url(c, url, what);
	struct bci_collect_upload upload = {
		.url = url,
		.token = c->machine.token,
		.ca_file = bci_config_get(c->config, "ca_file"),
		.path = p->archive,
		.sha256 = p->digest,
		.size = p->size,
		.deadline = c->deadline,
		.max_rate = bci_config_get_size(c->config, "max_rate"),
		.console = c->console,
	};
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	ret = bci_collect_upload_run(&upload, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &end);
	double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
	if (bci_collect_path(run_dir, sizeof(run_dir), "%s/%s", c->runs, p->run->name) < 0)
		return -ENAMETOOLONG;
	if (ret == -EEXIST) {
		fprintf(c->console, "collect: run %s: %s\n", p->run->name, err);
		return held_settle(c, p, &upload, run_dir);
	}
	if (ret < 0) {
		fprintf(c->console, "collect: run %s not uploaded: %s; it stays on the partition\n",
			p->run->name, err);
		return ret;
	}
	if (ret == 0)
		ret = bci_collect_run_mark_uploaded(run_dir, p->digest, p->size, (long long)time(NULL));
	if (ret < 0) {
		/* Uploaded, but not marked: the next boot asks the master again and finds it stored. */
		fprintf(c->console, "collect: run %s: uploaded, but %s/%s cannot be written: %s\n",
			p->run->name, run_dir, BCI_COLLECT_UPLOADED_FILE, strerror(-ret));
		return ret;
	}
	outgoing_remove(c, p->run->name);
	fprintf(c->console, "collect: run %s uploaded: %llu bytes, sha256 %s, in %.2f s (%.2f MiB/s)\n",
		p->run->name, (unsigned long long)p->size, p->digest, seconds,
		seconds > 0 ? (double)p->size / 1048576.0 / seconds : 0.0);
	return 0;
}

/* First of all: a machine that cannot run its jobs says so (fault.c). True once the master has it. */
static bool fault_report(struct collect *c)
{
	char url[PATH_MAX * 2];
	struct bci_collect_upload report = {
		.url = url, .token = c->machine.token,
		.ca_file = bci_config_get(c->config, "ca_file"), .console = c->console,
	};

	master_url(c, url, "fault");
	return bci_collect_fault_report(bci_config_get(c->config, "root"), &report, c->console) > 0;
}

/*
 * Then hello: the master learns that the known-good image boots (so a run it
 * ended is the kernel's fault, not the disk's) and answers whether it holds
 * the machine out of its schedule. True when it does.
 */
static bool hello(struct collect *c)
{
	char url[PATH_MAX * 2], err[1024];
	struct bci_collect_upload report = {
		.url = url, .token = c->machine.token,
		.ca_file = bci_config_get(c->config, "ca_file"), .console = c->console,
	};
	struct bci_collect_hello answer;
	int ret;

	master_url(c, url, "hello");
	ret = bci_collect_hello(&report, &answer, err, sizeof(err));
	if (ret == -ENOENT) {
		fprintf(c->console, "collect: the master takes no hello (an older master?): %s\n", err);
		return false;
	}
	if (ret < 0) {
		fprintf(c->console, "collect: hello: %s\n", err);
		return false;
	}
	if (answer.out)
		fprintf(c->console, "collect: the master holds this machine out of its schedule: %s\n",
			answer.note[0] ? answer.note : "(no reason given)");
	return answer.out;
}

/*
 * Every run's archive first, then the uploads: a master out of reach this
 * boot still finds every archive ready (and resumable) at the next one.
 */
static int collect_all(struct collect *c)
{
	struct bci_collect_run *runs = NULL;
	struct pending *pending;
	size_t count = 0, n = 0;
	bool reachable = true;
	char err[1024];
	int ret;

	ret = bci_collect_runs_list(c->runs, &runs, &count, err, sizeof(err));
	if (ret < 0) {
		fprintf(c->console, "collect: %s\n", err);
		return ret;
	}
	bci_collect_runs_settle(runs, count, excluded_cb, c);
	pending = calloc(count ? count : 1, sizeof(*pending));
	if (!pending) {
		free(runs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		struct bci_collect_run *run = &runs[i];

		/* A refused run was said once, when it was refused: it only stays. */
		if (excluded(c, run->name) || run->uploaded || run->refused)
			continue;
		if (!bci_manifest_word_ok(run->name)) {
			fprintf(c->console, "collect: run %s: its name cannot be a run id (letters, digits, '.', '_', '-'): left alone\n",
				run->name);
			c->left++;
			continue;
		}
		if (run->state == BCI_RUN_IN_PROGRESS && !ended_by_master(c, run))
			continue;
		pending[n].run = run;
		archive_run(c, &pending[n++]);
	}
	for (size_t i = 0; i < n; i++) {
		if (!pending[i].archived) {
			c->left++;
			continue;
		}
		if (!reachable) {
			fprintf(c->console, "collect: run %s stays on the partition (the master is out of reach)\n",
				pending[i].run->name);
			c->left++;
			continue;
		}
		ret = upload_run(c, &pending[i]);
		if (ret == 0) {
			c->uploaded++;
			continue;
		}
		c->left++;
		/* Out of reach until the deadline: the other runs wait for the next boot. */
		if (ret == -ETIMEDOUT)
			reachable = false;
	}
	free(pending);
	free(runs);
	return 0;
}

static int set_option(struct collect *c, const char *key, const char *value, const char *option)
{
	char err[512];

	if (bci_config_set(c->config, key, value, option, err, sizeof(err)) < 0) {
		fprintf(stderr, "bootci-collect: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

/* Options are applied after the file and the kernel command line: kept until then. */
struct option_value {
	const char *key, *value, *option;
};

static int parse_options(int argc, char **argv, struct option_value *values, size_t *count,
			 const char **config_path, bool *config_given, const char **cmdline_path)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "cmdline", required_argument, NULL, 'C' },
		{ "results", required_argument, NULL, 'r' },
		{ "master", required_argument, NULL, 'm' },
		{ "ca-file", required_argument, NULL, 'A' },
		{ "machine-file", required_argument, NULL, 'f' },
		{ "keep", required_argument, NULL, 'k' },
		{ "deadline", required_argument, NULL, 'd' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "max-rate", required_argument, NULL, 'R' },
		{ "console", required_argument, NULL, 'o' },
		{ "no-efi", no_argument, NULL, 'E' },
		{ "root", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*count = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		const char *key = NULL;

		switch (opt) {
		case 'c': *config_path = optarg; *config_given = true; continue;
		case 'C': *cmdline_path = optarg; continue;
		case 'r': key = "results"; break;
		case 'm': key = "master"; break;
		case 'A': key = "ca_file"; break;
		case 'f': key = "machine_file"; break;
		case 'k': key = "keep"; break;
		case 'd': key = "deadline"; break;
		case 'x': key = "exclude"; break;
		case 'R': key = "max_rate"; break;
		case 'o': key = "console"; break;
		case 'T': key = "root"; break;
		case 'E': values[(*count)++] = (struct option_value){ "efi", "no", "--no-efi" }; continue;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -EINVAL;
		}
		values[(*count)++] = (struct option_value){ key, optarg, argv[optind - 1] };
	}
	if (optind != argc) {
		fprintf(stderr, "bootci-collect: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int setup(struct collect *c, int argc, char **argv)
{
	const char *config_path = DEFAULT_CONFIG, *cmdline_path = DEFAULT_CMDLINE, *path;
	struct option_value values[64];
	bool config_given = false;
	size_t count = 0;
	char err[1024];
	int ret;

	if (argc > (int)(sizeof(values) / sizeof(values[0]))) {
		fprintf(stderr, "bootci-collect: too many options\n");
		return 2;
	}
	ret = parse_options(argc, argv, values, &count, &config_path, &config_given, &cmdline_path);
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	if (bci_config_new(bci_collect_keys, &c->config) < 0)
		return 1;
	ret = load_settings(c, config_path, config_given, cmdline_path, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-collect: %s\n", err);
		return 2;
	}
	for (size_t i = 0; i < count; i++)
		if (set_option(c, values[i].key, values[i].value, values[i].option) < 0)
			return 2;
	path = bci_config_get(c->config, "console");
	c->console = stderr;
	if (*path) {
		c->console = fopen(path, "a");
		if (!c->console) {
			fprintf(stderr, "bootci-collect: %s: %s\n", path, strerror(errno));
			c->console = stderr;
		}
	}
	setvbuf(c->console, NULL, _IOLBF, 0);
	snprintf(c->results, sizeof(c->results), "%s", bci_config_get(c->config, "results"));
	if (bci_collect_path(c->runs, sizeof(c->runs), "%s/runs", c->results) < 0 ||
	    bci_collect_path(c->outgoing, sizeof(c->outgoing), "%s/" BCI_COLLECT_OUTGOING_DIR,
			     c->results) < 0) {
		fprintf(stderr, "bootci-collect: results: path too long\n");
		return 2;
	}
	if (bci_config_get_list(c->config, "exclude", &c->exclude_storage, &c->exclude,
				&c->exclude_count) < 0)
		return 1;
	return -1; /* go on */
}

/*
 * The machine file's own settings beat the image's file and the defaults; the
 * kernel command line and the options beat them.
 */
static int apply_machine_settings(struct collect *c, const char *path)
{
	const struct {
		const char *key, *value;
	} settings[] = {
		{ "master", c->machine.master },
		{ "ca_file", c->machine.ca_file },
		{ "keep", c->machine.keep },
		{ "deadline", c->machine.deadline },
	};
	char err[1024];

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const char *origin = bci_config_origin(c->config, settings[i].key);

		if (!settings[i].value[0] || !strcmp(origin, "kernel command line") ||
		    !strncmp(origin, "--", 2))
			continue;
		if (bci_config_set(c->config, settings[i].key, settings[i].value, path, err,
				   sizeof(err)) < 0) {
			fprintf(c->console, "collect: %s\n", err);
			return -EINVAL;
		}
	}
	return 0;
}

int bci_collect_command(int argc, char **argv)
{
	struct collect c = { 0 };
	char path[PATH_MAX * 2], err[1024];
	const char *file;
	bool taken_out;
	int status;

	status = setup(&c, argc, argv);
	if (status >= 0)
		goto out;
	status = 1;
	file = bci_config_get(c.config, "machine_file");
	if (file[0] == '/')
		snprintf(path, sizeof(path), "%s", file);
	else
		snprintf(path, sizeof(path), "%s/%s", c.results, file);
	if (bci_collect_machine_read(path, &c.machine, err, sizeof(err)) < 0) {
		fprintf(c.console, "collect: %s: nothing uploaded\n", err);
		goto out;
	}
	if (apply_machine_settings(&c, path) < 0)
		goto out;
	c.deadline = bci_collect_now() + (long long)bci_config_get_seconds(c.config, "deadline");
	if (!*bci_config_get(c.config, "master")) {
		fprintf(c.console, "collect: no master configured (master= in %s, or " CMDLINE_PREFIX
				   "master= on the kernel command line): nothing uploaded\n",
			DEFAULT_CONFIG);
		goto out;
	}
	fprintf(c.console, "collect: machine %s, master %s, runs in %s\n", c.machine.name,
		bci_config_get(c.config, "master"), c.runs);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		fprintf(c.console, "collect: libcurl cannot start\n");
		goto out;
	}
	bci_collect_efi_root_set(bci_config_get(c.config, "root"));
	taken_out = fault_report(&c);
	taken_out = hello(&c) || taken_out;
	if (collect_all(&c) == 0) {
		int deleted = bci_collect_runs_retain(c.runs, bci_config_get_number(c.config, "keep"),
						      c.console);
		fprintf(c.console, "collect: %u run%s uploaded, %u left for the next boot%s%s\n",
			c.uploaded, c.uploaded == 1 ? "" : "s", c.left,
			c.refused ? " (refused by the master: kept, not sent again)" : "",
			deleted > 0 ? ", older uploaded runs deleted" : "");
		status = c.left == 0 && deleted >= 0 ? 0 : 1;
	}
	/* The runs went first: what is left stays for when the machine is back. */
	if (taken_out) {
		fprintf(c.console, "collect: the master holds this machine out: exit status %d asks"
				   " for a power-off\n", EXIT_TAKEN_OUT);
		status = EXIT_TAKEN_OUT;
	}
	curl_global_cleanup();
out:
	explicit_bzero(&c.machine, sizeof(c.machine));
	if (c.console && c.console != stderr)
		fclose(c.console);
	free(c.exclude_storage);
	free(c.exclude);
	bci_config_free(c.config);
	return status;
}

// SPDX-License-Identifier: MIT
/* DATA/patchwork.conf: the Patchwork projects the master follows (format in patchwork.h). */
#include "patchwork.h"

#include "manifest.h"
#include "config.h"
#include "fsutil.h"
#include "message.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KEY_URL (1u << 0)
#define KEY_PROJECT (1u << 1)
#define KEY_TOKEN (1u << 2)
#define KEY_POLL (1u << 3)
#define KEY_SERVE (1u << 4)
#define KEY_MBOX (1u << 5)
#define KEY_FIRST (1u << 6)
#define KEY_BUILD (1u << 7)
#define KEY_TREE (1u << 8)
#define KEY_BASE (1u << 9)
#define KEY_BRANCH (1u << 10)
#define KEY_TIMEOUT (1u << 11)

struct parser {
	const char *origin;
	unsigned line;
	struct bci_patchwork_config *config;
	struct bci_patchwork_project *current;
	unsigned seen;
	char *err;
	size_t err_size;
};

static int fail(struct parser *p, const char *fmt, const char *a)
{
	char quoted[200];

	bci_quote(quoted, sizeof(quoted), a ? a : "", a ? strlen(a) : 0);
	bci_message_at(p->err, p->err_size, p->origin, p->line, fmt, quoted);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static bool http_url(const char *value)
{
	const char *host;

	if (!strncmp(value, "http://", 7))
		host = value + 7;
	else if (!strncmp(value, "https://", 8))
		host = value + 8;
	else
		return false;
	if (!*host || *host == '/')
		return false;
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == '"' || *c == '<' || *c == '>' || *c == '?' ||
		    *c == '#' || (unsigned char)*c >= 0x7f)
			return false;
	return true;
}

/* A URL kept without its trailing '/'s. */
static int keep_url(struct parser *p, const char *key, const char *value, char **out)
{
	size_t len = strlen(value);

	if (!http_url(value))
		return fail(p, "%s: expected an http:// or https:// URL without query", key);
	while (len > 0 && value[len - 1] == '/')
		len--;
	*out = strndup(value, len);
	return *out ? 0 : -ENOMEM;
}

static int parse_header(struct parser *p, char *line)
{
	char *end = strchr(line, ']'), *name;
	struct bci_patchwork_project *grown;

	if (!end || trim(end + 1)[0])
		return fail(p, "a section header is [project NAME]: '%s'", line);
	*end = '\0';
	name = trim(line + 1);
	if (strncmp(name, "project", 7) || (name[7] != ' ' && name[7] != '\t'))
		return fail(p, "unknown section '[%s]' (expected [project NAME])", name);
	name = trim(name + 8);
	if (!bci_manifest_word_ok(name))
		return fail(p, "project name '%s': expected a word (letters, digits, '.', '_', '-')",
			    name);
	if (bci_patchwork_config_project(p->config, name))
		return fail(p, "project '%s' twice", name);
	grown = realloc(p->config->projects,
			(p->config->project_count + 1) * sizeof(*p->config->projects));
	if (!grown)
		return -ENOMEM;
	p->config->projects = grown;
	p->current = &grown[p->config->project_count++];
	*p->current = (struct bci_patchwork_project){
		.poll = BCI_PATCHWORK_POLL_DEFAULT, .mbox_limit = BCI_PATCHWORK_MBOX_LIMIT_DEFAULT,
		.build_timeout = BCI_PATCHWORK_BUILD_TIMEOUT_DEFAULT,
		.line = p->line,
	};
	p->seen = 0;
	if (!(p->current->name = strdup(name)))
		return -ENOMEM;
	return 0;
}

static int once(struct parser *p, unsigned bit, const char *key)
{
	if (p->seen & bit)
		return fail(p, "key '%s' twice", key);
	p->seen |= bit;
	return 0;
}

static int parse_key(struct parser *p, const char *key, const char *value)
{
	struct bci_patchwork_project *project = p->current;
	unsigned long number;
	int ret;

	if (!project)
		return fail(p, "'%s' outside a [project NAME] section", key);
	if (!strcmp(key, "url")) {
		if ((ret = once(p, KEY_URL, key)) < 0)
			return ret;
		return keep_url(p, key, value, &project->url);
	}
	if (!strcmp(key, "serve-url")) {
		if ((ret = once(p, KEY_SERVE, key)) < 0)
			return ret;
		return keep_url(p, key, value, &project->serve_url);
	}
	if (!strcmp(key, "project")) {
		if ((ret = once(p, KEY_PROJECT, key)) < 0)
			return ret;
		if (!bci_manifest_word_ok(value))
			return fail(p, "project: '%s' is no Patchwork linkname (a word)", value);
		project->linkname = strdup(value);
		return project->linkname ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "token-file")) {
		if ((ret = once(p, KEY_TOKEN, key)) < 0)
			return ret;
		if (value[0] != '/')
			return fail(p, "token-file: '%s' is not an absolute path", value);
		project->token_file = strdup(value);
		return project->token_file ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "poll")) {
		if ((ret = once(p, KEY_POLL, key)) < 0)
			return ret;
		if (bci_parse_seconds(value, &project->poll) < 0 || project->poll > 86400)
			return fail(p, "poll: '%s' is no duration from 1s to 1 day (N, Ns, Nm, Nh)",
				    value);
		return 0;
	}
	if (!strcmp(key, "mbox-limit")) {
		if ((ret = once(p, KEY_MBOX, key)) < 0)
			return ret;
		if (bci_parse_size(value, &project->mbox_limit) < 0 || !project->mbox_limit)
			return fail(p, "mbox-limit: '%s' is no size (N, NK, NM, NG)", value);
		return 0;
	}
	if (!strcmp(key, "first-series")) {
		if ((ret = once(p, KEY_FIRST, key)) < 0)
			return ret;
		if (bci_parse_number(value, &number) < 0)
			return fail(p, "first-series: '%s' is no series id (0 to 1000000)", value);
		project->first_series = (int64_t)number;
		return 0;
	}
	if (!strcmp(key, "build-command")) {
		if ((ret = once(p, KEY_BUILD, key)) < 0)
			return ret;
		if (value[0] != '/' || strpbrk(value, " \t"))
			return fail(p, "build-command: '%s' is not an absolute path (no arguments:"
				    " it is run without a shell)", value);
		project->build_command = strdup(value);
		return project->build_command ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "tree")) {
		if ((ret = once(p, KEY_TREE, key)) < 0)
			return ret;
		if (!bci_manifest_word_ok(value))
			return fail(p, "tree: '%s' is no tree name (a word)", value);
		project->tree = strdup(value);
		return project->tree ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "base")) {
		if ((ret = once(p, KEY_BASE, key)) < 0)
			return ret;
		if (!*value || strpbrk(value, " \t"))
			return fail(p, "base: '%s' is no repository path or URL (one word)", value);
		project->base = strdup(value);
		return project->base ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "branch")) {
		if ((ret = once(p, KEY_BRANCH, key)) < 0)
			return ret;
		if (!bci_manifest_word_ok(value) && !(strchr(value, '/') && !strpbrk(value, " \t")))
			return fail(p, "branch: '%s' is no branch name", value);
		project->branch = strdup(value);
		return project->branch ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "build-timeout")) {
		if ((ret = once(p, KEY_TIMEOUT, key)) < 0)
			return ret;
		if (bci_parse_seconds(value, &project->build_timeout) < 0 ||
		    project->build_timeout > 86400)
			return fail(p, "build-timeout: '%s' is no duration from 1s to 1 day"
				    " (N, Ns, Nm, Nh)", value);
		return 0;
	}
	return fail(p, "unknown key '%s'", key);
}

static int check_project(struct parser *p)
{
	struct bci_patchwork_project *project = p->current;

	unsigned line = p->line;
	int ret = 0;

	if (!project)
		return 0;
	/* A missing key is said at the section's header. */
	p->line = project->line;
	if (!project->url)
		ret = fail(p, "project '%s' has no url", project->name);
	else if (!project->token_file)
		ret = fail(p, "project '%s' has no token-file", project->name);
	else if (project->build_command && !project->base)
		ret = fail(p, "project '%s' has a build-command but no base", project->name);
	p->line = line;
	if (ret < 0)
		return ret;
	if (!project->linkname && !(project->linkname = strdup(project->name)))
		return -ENOMEM;
	if (!project->tree && !(project->tree = strdup(project->name)))
		return -ENOMEM;
	if (!project->branch && !(project->branch = strdup("master")))
		return -ENOMEM;
	return 0;
}

static int parse_line(struct parser *p, char *line)
{
	char *eq, *key;

	line = trim(line);
	if (!*line || *line == '#')
		return 0;
	if (*line == '[') {
		int ret = check_project(p);

		return ret < 0 ? ret : parse_header(p, line);
	}
	eq = strchr(line, '=');
	if (!eq)
		return fail(p, "expected 'key = value' or a section header: '%s'", line);
	*eq = '\0';
	key = trim(line);
	if (!*key)
		return fail(p, "a line without a key%s", NULL);
	return parse_key(p, key, trim(eq + 1));
}

int bci_patchwork_config_parse(const char *origin, const char *text, size_t len,
			       struct bci_patchwork_config **out, char *err, size_t err_size)
{
	struct parser p = { .origin = origin, .err = err, .err_size = err_size };
	char *copy, *line, *next;
	unsigned line_number = 0;
	int ret = 0;

	*out = NULL;
	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "%s: a NUL byte: not a text file", origin);
		return -EINVAL;
	}
	if (!(p.config = calloc(1, sizeof(*p.config))) || !(copy = strndup(text, len))) {
		free(p.config);
		return -ENOMEM;
	}
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		p.line = ++line_number;
		if ((ret = parse_line(&p, line)) < 0)
			break;
	}
	if (!ret)
		ret = check_project(&p);
	free(copy);
	if (ret < 0) {
		if (ret == -ENOMEM)
			bci_message(err, err_size, "%s: out of memory", origin);
		bci_patchwork_config_free(p.config);
		return ret;
	}
	*out = p.config;
	return 0;
}

int bci_patchwork_config_load(const char *path, struct bci_patchwork_config **out, char *err,
			      size_t err_size)
{
	char *text = NULL;
	size_t len = 0;
	int ret = bci_read_file(path, &text, &len, 1 << 20);

	if (ret == -ENOENT)
		return ret;
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, bci_strerror(-ret));
		return ret;
	}
	ret = bci_patchwork_config_parse(path, text, len, out, err, err_size);
	free(text);
	return ret;
}

void bci_patchwork_config_free(struct bci_patchwork_config *config)
{
	if (!config)
		return;
	for (size_t i = 0; i < config->project_count; i++) {
		struct bci_patchwork_project *project = &config->projects[i];

		free(project->name);
		free(project->url);
		free(project->linkname);
		free(project->token_file);
		free(project->serve_url);
		free(project->build_command);
		free(project->tree);
		free(project->base);
		free(project->branch);
	}
	free(config->projects);
	free(config);
}

const struct bci_patchwork_project *
bci_patchwork_config_project(const struct bci_patchwork_config *config, const char *name)
{
	for (size_t i = 0; config && i < config->project_count; i++)
		if (!strcmp(config->projects[i].name, name))
			return &config->projects[i];
	return NULL;
}

// SPDX-License-Identifier: MIT
/*
 * Patchwork's answers read (patchwork.h, parse.c): a page of the series
 * listing, a patch's check list, a project's maintainers, the Link header.
 * Outside input: every field's type is checked, nothing is trusted to be
 * there.
 */
#include "patchwork.h"

#include "message.h"

#include <errno.h>
#include <json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* JSON nesting deeper than this is no Patchwork answer. */
#define MAX_DEPTH 16

static struct json_object *parse_json(const char *json, size_t len, const char *what, char *err,
				      size_t err_size)
{
	struct json_tokener *tok;
	struct json_object *root;

	if (len > (size_t)INT32_MAX - 1) {
		bci_message(err, err_size, "%s: too large", what);
		return NULL;
	}
	tok = json_tokener_new_ex(MAX_DEPTH);
	if (!tok) {
		bci_message(err, err_size, "%s: out of memory", what);
		return NULL;
	}
	root = json_tokener_parse_ex(tok, json, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		/* Trailing blanks are fine; anything else after the value is garbage. */
		size_t end = root ? json_tokener_get_parse_end(tok) : 0;
		bool rest_blank = root != NULL;

		for (size_t i = end; rest_blank && i < len; i++)
			if (!strchr(" \t\r\n", json[i]))
				rest_blank = false;
		if (!rest_blank) {
			char quoted[64];

			bci_quote(quoted, sizeof(quoted), json, len < 40 ? len : 40);
			bci_message(err, err_size, "%s: not JSON (%s), starting '%s'", what,
				    root ? "trailing bytes"
					 : json_tokener_error_desc(json_tokener_get_error(tok)),
				    quoted);
			json_object_put(root);
			root = NULL;
		}
	}
	json_tokener_free(tok);
	return root;
}

static struct json_object *member(struct json_object *object, const char *key, json_type type)
{
	struct json_object *value;

	if (!json_object_object_get_ex(object, key, &value) || !json_object_is_type(value, type))
		return NULL;
	return value;
}

static char *string_copy(struct json_object *object, const char *key)
{
	struct json_object *value = member(object, key, json_type_string);
	const char *text = value ? json_object_get_string(value) : NULL;

	/* A string with a NUL inside is cut there: nothing Patchwork sends holds one. */
	return text ? strdup(text) : NULL;
}

static bool int_member(struct json_object *object, const char *key, int64_t *out)
{
	struct json_object *value = member(object, key, json_type_int);

	if (!value)
		return false;
	*out = json_object_get_int64(value);
	return true;
}

/* @n digits at @p as a number, or -1. */
static int digits(const char *p, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

int bci_patchwork_date_parse(const char *text, double *out)
{
	struct tm tm = { 0 };
	const char *p = text;
	double fraction = 0, scale = 0.1;
	int year, month, day, hour, minute, second;
	time_t t;

	if (!text || strlen(text) < 19 || text[4] != '-' || text[7] != '-' ||
	    (text[10] != 'T' && text[10] != ' ') || text[13] != ':' || text[16] != ':')
		return -EINVAL;
	year = digits(p, 4);
	month = digits(p + 5, 2);
	day = digits(p + 8, 2);
	hour = digits(p + 11, 2);
	minute = digits(p + 14, 2);
	second = digits(p + 17, 2);
	if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 ||
	    hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60)
		return -EINVAL;
	p += 19;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			fraction += (*p - '0') * scale;
	}
	/* Patchwork's dates are UTC without a zone; a zone, if any, may only say UTC. */
	if (*p && strcmp(p, "Z") && strcmp(p, "+00:00"))
		return -EINVAL;
	tm.tm_year = year - 1900;
	tm.tm_mon = month - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = minute;
	tm.tm_sec = second;
	t = timegm(&tm);
	if (t == (time_t)-1 || tm.tm_mday != day)
		return -EINVAL;
	*out = (double)t + fraction;
	return 0;
}

void bci_patchwork_series_clear(struct bci_patchwork_series *s)
{
	free(s->name);
	free(s->date);
	free(s->submitter);
	free(s->mbox);
	free(s->message_id);
	free(s->patches);
	memset(s, 0, sizeof(*s));
}

void bci_patchwork_series_free_all(struct bci_patchwork_series *series, size_t count)
{
	for (size_t i = 0; i < count; i++)
		bci_patchwork_series_clear(&series[i]);
	free(series);
}

static int series_read(struct json_object *object, size_t index, struct bci_patchwork_series *s,
		       char *err, size_t err_size)
{
	struct json_object *value, *patches;
	bool latest_patch = false;
	int64_t number;
	double date;

	memset(s, 0, sizeof(*s));
	if (!json_object_is_type(object, json_type_object) || !int_member(object, "id", &s->id) ||
	    s->id <= 0) {
		bci_message(err, err_size, "series listing: entry %zu is no series (no positive id)",
			    index);
		return -EBADMSG;
	}
	s->name = string_copy(object, "name");
	s->date = string_copy(object, "date");
	s->mbox = string_copy(object, "mbox");
	if (int_member(object, "version", &number) && number > 0 && number < 100000)
		s->version = (int)number;
	else
		s->version = 1;
	if (int_member(object, "total", &number) && number >= 0 && number < 100000)
		s->total = (int)number;
	value = member(object, "received_all", json_type_boolean);
	s->received_all = value && json_object_get_boolean(value);
	if (bci_patchwork_date_parse(s->date, &s->complete) < 0)
		s->complete = -1;
	if ((value = member(object, "submitter", json_type_object)))
		s->submitter = string_copy(value, "email");
	if ((value = member(object, "cover_letter", json_type_object)))
		s->message_id = string_copy(value, "msgid");
	patches = member(object, "patches", json_type_array);
	if (patches && json_object_array_length(patches)) {
		size_t n = json_object_array_length(patches);

		s->patches = calloc(n, sizeof(*s->patches));
		if (!s->patches)
			goto nomem;
		for (size_t i = 0; i < n; i++) {
			struct json_object *patch = json_object_array_get_idx(patches, i);

			if (!json_object_is_type(patch, json_type_object) ||
			    !int_member(patch, "id", &number) || number <= 0) {
				bci_message(err, err_size,
					    "series %lld: patch %zu has no positive id",
					    (long long)s->id, i + 1);
				bci_patchwork_series_clear(s);
				return -EBADMSG;
			}
			s->patches[s->patch_count++] = number;
			if (!s->message_id && i == 0)
				s->message_id = string_copy(patch, "msgid");
			value = member(patch, "date", json_type_string);
			if (value && bci_patchwork_date_parse(json_object_get_string(value), &date) == 0 &&
			    (date > s->complete || !latest_patch)) {
				s->complete = date;
				latest_patch = true;
			}
		}
	}
	return 0;
nomem:
	bci_patchwork_series_clear(s);
	bci_message(err, err_size, "out of memory");
	return -ENOMEM;
}

int bci_patchwork_series_parse(const char *json, size_t len, struct bci_patchwork_series **series,
			       size_t *count, char *err, size_t err_size)
{
	struct json_object *root = parse_json(json, len, "series listing", err, err_size);
	struct bci_patchwork_series *grown;
	size_t n;
	int ret = 0;

	if (!root)
		return -EBADMSG;
	if (!json_object_is_type(root, json_type_array)) {
		bci_message(err, err_size, "series listing: not a JSON array");
		json_object_put(root);
		return -EBADMSG;
	}
	n = json_object_array_length(root);
	grown = realloc(*series, (*count + n + 1) * sizeof(**series));
	if (!grown) {
		json_object_put(root);
		return -ENOMEM;
	}
	*series = grown;
	for (size_t i = 0; i < n; i++) {
		ret = series_read(json_object_array_get_idx(root, i), i + 1, &grown[*count], err,
				  err_size);
		if (ret < 0)
			break;
		(*count)++;
	}
	json_object_put(root);
	return ret;
}

int bci_patchwork_checks_has(const char *json, size_t len, const char *context, const char *state,
			     char *err, size_t err_size)
{
	struct json_object *root = parse_json(json, len, "check list", err, err_size);
	int found = 0;

	if (!root)
		return -EBADMSG;
	if (!json_object_is_type(root, json_type_array)) {
		bci_message(err, err_size, "check list: not a JSON array");
		json_object_put(root);
		return -EBADMSG;
	}
	for (size_t i = 0; i < json_object_array_length(root) && !found; i++) {
		struct json_object *check = json_object_array_get_idx(root, i), *c, *s;

		if (!json_object_is_type(check, json_type_object)) {
			bci_message(err, err_size, "check list: entry %zu is no object", i + 1);
			json_object_put(root);
			return -EBADMSG;
		}
		c = member(check, "context", json_type_string);
		s = member(check, "state", json_type_string);
		found = c && s && !strcmp(json_object_get_string(c), context) &&
			!strcmp(json_object_get_string(s), state);
	}
	json_object_put(root);
	return found;
}

int bci_patchwork_project_maintainers(const char *json, size_t len, int64_t **ids, size_t *count,
				      char *err, size_t err_size)
{
	struct json_object *root = parse_json(json, len, "project", err, err_size), *list;
	int64_t id;
	size_t n;

	*ids = NULL;
	*count = 0;
	if (!root)
		return -EBADMSG;
	if (!json_object_is_type(root, json_type_object) || !int_member(root, "id", &id) ||
	    !(list = member(root, "maintainers", json_type_array))) {
		bci_message(err, err_size, "project: not a project (no id or maintainers)");
		json_object_put(root);
		return -EBADMSG;
	}
	n = json_object_array_length(list);
	if (n && !(*ids = calloc(n, sizeof(**ids)))) {
		json_object_put(root);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *user = json_object_array_get_idx(list, i);

		if (json_object_is_type(user, json_type_object) && int_member(user, "id", &id))
			(*ids)[(*count)++] = id;
	}
	json_object_put(root);
	return 0;
}

/* RFC 8288 link-values: `<target>` then `; param` ...; rel may be quoted and hold several types. */
int bci_patchwork_link_next(const char *header, char *next, size_t next_size)
{
	const char *p = header;

	next[0] = '\0';
	for (;;) {
		const char *target, *target_end;
		bool is_next = false;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			return 0;
		if (*p != '<')
			return -EBADMSG;
		target = ++p;
		target_end = strchr(p, '>');
		if (!target_end)
			return -EBADMSG;
		p = target_end + 1;
		while (*p == ' ' || *p == '\t' || *p == ';') {
			const char *name, *value;
			size_t name_len, value_len;

			while (*p == ' ' || *p == '\t' || *p == ';')
				p++;
			name = p;
			while (*p && *p != '=' && *p != ';' && *p != ',' && *p != ' ')
				p++;
			name_len = (size_t)(p - name);
			while (*p == ' ')
				p++;
			if (*p != '=')
				continue;
			p++;
			while (*p == ' ')
				p++;
			if (*p == '"') {
				value = ++p;
				while (*p && *p != '"')
					p++;
				if (!*p)
					return -EBADMSG;
				value_len = (size_t)(p - value);
				p++;
			} else {
				value = p;
				while (*p && *p != ';' && *p != ',' && *p != ' ')
					p++;
				value_len = (size_t)(p - value);
			}
			if (name_len == 3 && !strncasecmp(name, "rel", 3)) {
				/* rel="next last": a space-separated list of types. */
				for (size_t i = 0; i < value_len;) {
					size_t j = i;

					while (j < value_len && value[j] != ' ')
						j++;
					if (j - i == 4 && !strncasecmp(value + i, "next", 4))
						is_next = true;
					i = j + 1;
				}
			}
		}
		if (*p && *p != ',')
			return -EBADMSG;
		if (is_next) {
			size_t len = (size_t)(target_end - target);

			if (!len)
				return -EBADMSG;
			if (len >= next_size)
				return -ENAMETOOLONG;
			memcpy(next, target, len);
			next[len] = '\0';
			return 1;
		}
	}
}

// SPDX-License-Identifier: MIT
/* The refused uploads' records (refused.h): written, removed, listed, as JSON. */
#include "refused.h"
#include "../names.h"
#include "fsutil.h"
#include "jsonw.h"
#include "message.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A record's largest size: its words, its digest, its reason escaped six bytes a byte. */
#define RECORD_MAX (8 * 1024)

static int record_path(char *path, const char *data_dir, const char *machine, const char *run_id)
{
	int n = snprintf(path, PATH_MAX, "%s/refused/%s%s%s", data_dir, machine,
			 run_id ? "/" : "", run_id ? run_id : "");

	if (n < 0 || n >= PATH_MAX - 6)
		return -ENAMETOOLONG;
	if (run_id)
		strcat(path, ".json");
	return 0;
}

/* The record at @path into @r: 0, -ENOENT, or -EINVAL (@err names the file). */
static int record_read(const char *path, struct bci_refused *r, char *err, size_t err_size)
{
	struct json_object *root, *v[7];
	static const char *const keys[7] = { "machine", "run_id", "sha256", "size", "reason",
					     "time", "count" };
	static const enum json_type types[7] = { json_type_string, json_type_string,
						 json_type_string, json_type_int, json_type_string,
						 json_type_int, json_type_int };
	size_t len;
	char *text;
	int ret;

	ret = bci_read_file(path, &text, &len, RECORD_MAX);
	if (ret < 0) {
		if (ret != -ENOENT)
			bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	root = json_tokener_parse(text);
	free(text);
	ret = root ? 0 : -EINVAL;
	for (int i = 0; i < 7 && ret == 0; i++)
		if (!json_object_object_get_ex(root, keys[i], &v[i]) ||
		    !json_object_is_type(v[i], types[i]))
			ret = -EINVAL;
	if (ret == 0 && (!bci_name_machine_ok(json_object_get_string(v[0])) ||
			 !bci_name_run_id_ok(json_object_get_string(v[1])) ||
			 !bci_sha256_hex_ok(json_object_get_string(v[2]))))
		ret = -EINVAL;
	if (ret < 0) {
		bci_message(err, err_size, "%s: not a refused upload's record", path);
		json_object_put(root);
		return ret;
	}
	memset(r, 0, sizeof(*r));
	strcpy(r->machine, json_object_get_string(v[0]));
	strcpy(r->run_id, json_object_get_string(v[1]));
	strcpy(r->sha256, json_object_get_string(v[2]));
	r->size = (uint64_t)json_object_get_int64(v[3]);
	/* Bytes written as Latin-1 characters come back longer: the reason is cut, not refused. */
	snprintf(r->reason, sizeof(r->reason), "%s", json_object_get_string(v[4]));
	r->time = json_object_get_int64(v[5]);
	r->count = (uint64_t)json_object_get_int64(v[6]);
	json_object_put(root);
	return 0;
}

static void record_write(struct bci_jsonw *w, const struct bci_refused *r)
{
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "machine");
	bci_jsonw_string(w, r->machine);
	bci_jsonw_key(w, "run_id");
	bci_jsonw_string(w, r->run_id);
	bci_jsonw_key(w, "sha256");
	bci_jsonw_string(w, r->sha256);
	bci_jsonw_key(w, "size");
	bci_jsonw_int(w, (long long)r->size);
	bci_jsonw_key(w, "reason");
	bci_jsonw_string(w, r->reason);
	bci_jsonw_key(w, "time");
	bci_jsonw_int(w, (long long)r->time);
	bci_jsonw_key(w, "count");
	bci_jsonw_int(w, (long long)r->count);
	bci_jsonw_object_end(w);
}

int bci_refused_add(const char *data_dir, const struct bci_refused *r, char *err, size_t err_size)
{
	struct bci_refused record = *r, before;
	char path[PATH_MAX], dir[PATH_MAX], *text = NULL;
	struct bci_jsonw w;
	size_t len = 0;
	FILE *f;
	int ret;

	if (!bci_name_machine_ok(r->machine) || !bci_name_run_id_ok(r->run_id)) {
		bci_message(err, err_size, "refused upload: '%s/%s' is not a machine and run",
			    r->machine, r->run_id);
		return -EINVAL;
	}
	if (record_path(dir, data_dir, r->machine, NULL) < 0 ||
	    record_path(path, data_dir, r->machine, r->run_id) < 0) {
		bci_message(err, err_size, "%s/refused: %s", data_dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	/* A record that cannot be read is replaced: the count starts again. */
	record.count = record_read(path, &before, NULL, 0) == 0 ? before.count + 1 : 1;
	ret = bci_mkdir_p(dir, 0750);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		bci_message(err, err_size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	bci_jsonw_init(&w, f, 0);
	record_write(&w, &record);
	ret = bci_jsonw_finish(&w);
	if (fclose(f) != 0 && ret == 0)
		ret = -ENOMEM;
	if (ret == 0)
		ret = bci_write_file_atomic(path, text, len, 0640);
	free(text);
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

int bci_refused_forget(const char *data_dir, const char *machine, const char *run_id)
{
	char path[PATH_MAX], dir[PATH_MAX];

	if (record_path(path, data_dir, machine, run_id) < 0 ||
	    record_path(dir, data_dir, machine, NULL) < 0)
		return -ENAMETOOLONG;
	if (unlink(path) < 0)
		return errno == ENOENT ? 0 : -errno;
	return bci_fsync_dir(dir);
}

/* Appends @machine's records to *@list. */
static int machine_list(const char *data_dir, const char *machine, struct bci_refused **list,
			size_t *count, size_t *cap, char *err, size_t err_size)
{
	char dir[PATH_MAX], path[PATH_MAX + NAME_MAX + 2];
	struct dirent *d;
	DIR *folder;
	int ret = 0;

	if (record_path(dir, data_dir, machine, NULL) < 0)
		return -ENAMETOOLONG;
	folder = opendir(dir);
	if (!folder) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		bci_message(err, err_size, "%s: %s", dir, strerror(errno));
		return ret;
	}
	while (ret == 0 && (d = readdir(folder))) {
		size_t len = strlen(d->d_name);

		/* Only records: what atomic writes leave behind is not one. */
		if (d->d_name[0] == '.' || len <= 5 || strcmp(d->d_name + len - 5, ".json"))
			continue;
		if (*count == *cap) {
			size_t more = *cap ? *cap * 2 : 16;
			struct bci_refused *grown = realloc(*list, more * sizeof(**list));

			if (!grown) {
				ret = -ENOMEM;
				bci_message(err, err_size, "%s", strerror(ENOMEM));
				break;
			}
			*list = grown;
			*cap = more;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		ret = record_read(path, &(*list)[*count], err, err_size);
		if (ret == -ENOENT)
			ret = 0;	/* forgotten meanwhile */
		else if (ret == 0)
			(*count)++;
	}
	closedir(folder);
	return ret;
}

/* Newest first; then by machine and run, so that the order is the same every time. */
static int newest_first(const void *a, const void *b)
{
	const struct bci_refused *x = a, *y = b;
	int c;

	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	c = strcmp(x->machine, y->machine);
	return c ? c : strcmp(x->run_id, y->run_id);
}

int bci_refused_list(const char *data_dir, const char *machine, struct bci_refused **list,
		     size_t *count, char *err, size_t err_size)
{
	char dir[PATH_MAX];
	size_t cap = 0;
	struct dirent *d;
	DIR *folder;
	int ret = 0;

	*list = NULL;
	*count = 0;
	if (machine) {
		if (!bci_name_machine_ok(machine)) {
			bci_message(err, err_size, "'%s' is not a machine name", machine);
			return -EINVAL;
		}
		ret = machine_list(data_dir, machine, list, count, &cap, err, err_size);
	} else if (snprintf(dir, sizeof(dir), "%s/refused", data_dir) >= (int)sizeof(dir)) {
		ret = -ENAMETOOLONG;
		bci_message(err, err_size, "%s/refused: %s", data_dir, strerror(ENAMETOOLONG));
	} else if (!(folder = opendir(dir))) {
		if (errno != ENOENT) {
			ret = -errno;
			bci_message(err, err_size, "%s: %s", dir, strerror(errno));
		}
	} else {
		while (ret == 0 && (d = readdir(folder)))
			if (bci_name_machine_ok(d->d_name))
				ret = machine_list(data_dir, d->d_name, list, count, &cap, err,
						   err_size);
		closedir(folder);
	}
	if (ret < 0) {
		free(*list);
		*list = NULL;
		*count = 0;
		return ret;
	}
	if (*count > 1)
		qsort(*list, *count, sizeof(**list), newest_first);
	return 0;
}

int bci_refused_json(FILE *out, const struct bci_refused *list, size_t count)
{
	struct bci_jsonw w;

	bci_jsonw_init(&w, out, 2);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "refused");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < count; i++)
		record_write(&w, &list[i]);
	bci_jsonw_array_end(&w);
	bci_jsonw_object_end(&w);
	return bci_jsonw_finish(&w);
}

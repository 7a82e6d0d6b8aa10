// SPDX-License-Identifier: MIT
/*
 * The store's machines (their tags and shard group) and builds (store.h).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- machines and tags ---- */

int bci_store_machine_ensure(struct bci_store *store, const char *name, int64_t *id,
			     char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(name), value_real(bci_store_now(), 0) };
	int64_t key = -1;
	int ret;

	if (!name || !*name) {
		snprintf(err, err_size, "a machine needs a name");
		return -EINVAL;
	}
	ret = bci_store_query(store, S_MACHINE_ENSURE, params, 2, bci_store_row_first_int, &key,
			      err, err_size);
	if (ret < 0)
		return ret;
	if (id)
		*id = key;
	return 0;
}

int bci_store_machine_tag(struct bci_store *store, const char *machine, const char *tag,
			  char *err, size_t err_size)
{
	struct bci_store_value params[2];
	int64_t key;
	int ret;

	if (!tag || !*tag) {
		snprintf(err, err_size, "machine %s: an empty tag", machine);
		return -EINVAL;
	}
	ret = bci_store_machine_ensure(store, machine, &key, err, err_size);
	if (ret < 0)
		return ret;
	params[0] = value_int(key);
	params[1] = value_text(tag);
	return bci_store_query(store, S_TAG_ADD, params, 2, NULL, NULL, err, err_size);
}

int bci_store_machine_untag(struct bci_store *store, const char *machine, const char *tag,
			    char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(tag), value_text(machine) };

	return bci_store_query(store, S_TAG_DELETE, params, 2, NULL, NULL, err, err_size);
}

struct name_walk {
	int (*fn)(const char *name, void *ctx);
	void *ctx;
	int count;
};

static int row_name(const struct bci_store_value *columns, int n, void *ctx)
{
	struct name_walk *walk = ctx;

	if (n < 1)
		return -EPROTO;
	walk->count++;
	return walk->fn ? walk->fn(column_text(&columns[0]), walk->ctx) : 0;
}

int bci_store_machine_tags(struct bci_store *store, const char *machine,
			   int (*fn)(const char *tag, void *ctx), void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, S_TAGS, &param, 1, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_machines_each(struct bci_store *store, const char *tag,
			    int (*fn)(const char *machine, void *ctx), void *ctx,
			    char *err, size_t err_size)
{
	struct bci_store_value param = value_text(tag);
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	if (tag)
		ret = bci_store_query(store, S_MACHINES_TAGGED, &param, 1, row_name, &walk, err, err_size);
	else
		ret = bci_store_query(store, S_MACHINES_ALL, NULL, 0, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_machine_group_set(struct bci_store *store, const char *machine, const char *group,
				char *err, size_t err_size)
{
	struct bci_store_value params[2];
	int64_t key;
	int ret;

	if (group && !*group) {
		snprintf(err, err_size, "machine %s: an empty shard group", machine);
		return -EINVAL;
	}
	ret = bci_store_machine_ensure(store, machine, &key, err, err_size);
	if (ret < 0)
		return ret;
	params[0] = value_text(group);
	params[1] = value_int(key);
	return bci_store_query(store, S_MACHINE_GROUP_SET, params, 2, NULL, NULL, err, err_size);
}

struct group_copy {
	char *group;
	size_t size;
	int found;
};

static int row_group(const struct bci_store_value *columns, int n, void *ctx)
{
	struct group_copy *copy = ctx;
	const char *group;

	if (n < 1)
		return -EPROTO;
	group = column_text(&columns[0]);
	if (!group)
		return 0;
	if (strlen(group) >= copy->size)
		return -ENAMETOOLONG;
	strcpy(copy->group, group);
	copy->found = 1;
	return 0;
}

int bci_store_machine_group(struct bci_store *store, const char *machine, char *group,
			    size_t size, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct group_copy copy = { group, size, 0 };
	int ret;

	if (size)
		group[0] = '\0';
	ret = bci_store_query(store, S_MACHINE_GROUP, &param, 1, row_group, &copy, err, err_size);
	if (ret == -ENAMETOOLONG)
		snprintf(err, err_size, "machine %s: its shard group is longer than %zu bytes",
			 machine, size ? size - 1 : 0);
	return ret < 0 ? ret : copy.found;
}

int bci_store_group_machines_each(struct bci_store *store, const char *group,
				  int (*fn)(const char *machine, void *ctx), void *ctx,
				  char *err, size_t err_size)
{
	struct bci_store_value param = value_text(group);
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, S_MACHINES_GROUPED, &param, 1, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- builds ---- */

int bci_store_build_key(struct bci_store *store, const char *name, int64_t *key, char *err,
			size_t err_size)
{
	struct bci_store_value param = value_text(name);
	int ret;

	*key = -1;
	ret = bci_store_query(store, S_BUILD_ID, &param, 1, bci_store_row_first_int, key, err, err_size);
	if (ret < 0)
		return ret;
	if (*key < 0) {
		snprintf(err, err_size, "no build named '%s' in the store", name);
		return -ENOENT;
	}
	return 0;
}

int bci_store_build_put(struct bci_store *store, const struct bci_store_build *build,
			char *err, size_t err_size)
{
	struct bci_store_value params[8];
	int64_t base = -1;
	int ret;

	if (!build->name || !*build->name || !build->tree || !*build->tree || !build->commit ||
	    !*build->commit) {
		snprintf(err, err_size, "a build needs a name, a tree and a commit");
		return -EINVAL;
	}
	if (!build->tier || (strcmp(build->tier, "fast") && strcmp(build->tier, "full"))) {
		snprintf(err, err_size, "build %s: tier '%s' is neither fast nor full", build->name,
			 build->tier ? build->tier : "");
		return -EINVAL;
	}
	if (build->base) {
		ret = bci_store_build_key(store, build->base, &base, err, err_size);
		if (ret < 0)
			return ret;
	}
	params[0] = value_text(build->name);
	params[1] = value_text(build->tree);
	params[2] = value_text(build->commit);
	params[3] = value_text(build->tier);
	params[4] = base >= 0 ? value_int(base) : value_text(NULL);
	params[5] = value_text(build->series_title);
	params[6] = value_text(build->message_id);
	params[7] = value_real(build->registered > 0 ? build->registered : bci_store_now(), 0);
	return bci_store_query(store, S_BUILD_PUT, params, 8, NULL, NULL, err, err_size);
}

struct build_walk {
	int (*fn)(const struct bci_store_build *build, void *ctx);
	void *ctx;
	int count;
};

static int row_build(const struct bci_store_value *c, int n, void *ctx)
{
	struct build_walk *walk = ctx;
	struct bci_store_build build;

	if (n < 8)
		return -EPROTO;
	build = (struct bci_store_build){
		.name = column_text(&c[0]),
		.tree = column_text(&c[1]),
		.commit = column_text(&c[2]),
		.tier = column_text(&c[3]),
		.base = column_text(&c[4]),
		.series_title = column_text(&c[5]),
		.message_id = column_text(&c[6]),
		.registered = column_real(&c[7], 0),
	};
	walk->count++;
	return walk->fn ? walk->fn(&build, walk->ctx) : 0;
}

int bci_store_build_get(struct bci_store *store, const char *name,
			int (*fn)(const struct bci_store_build *build, void *ctx), void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value param = value_text(name);
	struct build_walk walk = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, S_BUILD_GET, &param, 1, row_build, &walk, err, err_size);
	if (ret)
		return ret;
	if (!walk.count) {
		snprintf(err, err_size, "no build named '%s' in the store", name);
		return -ENOENT;
	}
	return 0;
}

int bci_store_tree_builds_each(struct bci_store *store, const char *tree,
			       int (*fn)(const struct bci_store_build *build, void *ctx), void *ctx,
			       char *err, size_t err_size)
{
	struct bci_store_value param = value_text(tree);
	struct build_walk walk = { fn, ctx, 0 };
	int ret = bci_store_query(store, S_BUILDS_TREE, &param, 1, row_build, &walk, err, err_size);

	return ret < 0 ? ret : walk.count;
}

/* Appends @text (NULL stays NULL) at *@at, moving it past the copy. */
static const char *text_place(const char *text, char **at)
{
	char *copy = *at;

	if (!text)
		return NULL;
	*at = stpcpy(copy, text) + 1;
	return copy;
}

static int build_copy(const struct bci_store_build *b, void *ctx)
{
	const char *texts[] = { b->name, b->tree, b->commit, b->tier, b->base, b->series_title,
				b->message_id };
	struct bci_store_build **out = ctx, *copy;
	size_t size = sizeof(*copy);
	char *at;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		size += texts[i] ? strlen(texts[i]) + 1 : 0;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	at = (char *)(copy + 1);
	copy->name = text_place(b->name, &at);
	copy->tree = text_place(b->tree, &at);
	copy->commit = text_place(b->commit, &at);
	copy->tier = text_place(b->tier, &at);
	copy->base = text_place(b->base, &at);
	copy->series_title = text_place(b->series_title, &at);
	copy->message_id = text_place(b->message_id, &at);
	copy->registered = b->registered;
	free(*out);
	*out = copy;
	return 0;
}

int bci_store_build_read(struct bci_store *store, const char *name,
			 struct bci_store_build **build, char *err, size_t err_size)
{
	int ret;

	*build = NULL;
	ret = bci_store_build_get(store, name, build_copy, build, err, err_size);
	if (ret < 0) {
		free(*build);
		*build = NULL;
	}
	return ret < 0 ? ret : 0;
}

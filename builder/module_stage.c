// SPDX-License-Identifier: MIT
#include "module_stage.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libkmod.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"

void builder_module_list_clear(struct builder_module_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->modules[i].name);
		free(list->modules[i].relative_path);
		for (size_t j = 0; j < list->modules[i].firmware_count; j++)
			free(list->modules[i].firmware[j]);
		free(list->modules[i].firmware);
	}
	free(list->modules);
	list->modules = NULL;
	list->count = 0;
}

static bool module_list_has(const struct builder_module_list *list, const char *name)
{
	for (size_t i = 0; i < list->count; i++)
		if (!strcmp(list->modules[i].name, name))
			return true;
	return false;
}

/* @relative_path may be NULL (built-in). */
static int module_list_add(struct builder_module_list *list, const char *name,
			   const char *relative_path)
{
	struct builder_module *bigger = realloc(list->modules, (list->count + 1) * sizeof(*bigger));
	struct builder_module *m;

	if (!bigger)
		return -ENOMEM;
	list->modules = bigger;
	m = &list->modules[list->count];
	m->firmware = NULL;
	m->firmware_count = 0;
	m->name = strdup(name);
	m->relative_path = relative_path ? strdup(relative_path) : NULL;
	if (!m->name || (relative_path && !m->relative_path)) {
		free(m->name);
		free(m->relative_path);
		return -ENOMEM;
	}
	list->count++;
	return 0;
}

static int module_compare(const void *a, const void *b)
{
	const struct builder_module *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Work queue of referenced kmod modules still to visit. */
struct module_queue {
	struct kmod_module **items;
	size_t count, capacity;
};

static int module_queue_push_list(struct module_queue *q, struct kmod_list *list)
{
	struct kmod_list *l;

	kmod_list_foreach(l, list) {
		if (q->count == q->capacity) {
			size_t capacity = q->capacity ? q->capacity * 2 : 64;
			struct kmod_module **bigger = realloc(q->items, capacity * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			q->items = bigger;
			q->capacity = capacity;
		}
		/* kmod_module_get_module() returns a new reference, dropped after the visit. */
		q->items[q->count++] = kmod_module_get_module(l);
	}
	return 0;
}

/* The firmware= entries of @mod's modinfo, into @m. */
static int module_read_firmware(struct kmod_module *mod, struct builder_module *m)
{
	struct kmod_list *info = NULL, *l;
	int ret = kmod_module_get_info(mod, &info);

	if (ret < 0)
		return ret;
	ret = 0;
	kmod_list_foreach(l, info) {
		char **bigger;

		if (strcmp(kmod_module_info_get_key(l), "firmware"))
			continue;
		bigger = realloc(m->firmware, (m->firmware_count + 1) * sizeof(*bigger));
		if (!bigger) {
			ret = -ENOMEM;
			break;
		}
		m->firmware = bigger;
		if (!(bigger[m->firmware_count] = strdup(kmod_module_info_get_value(l)))) {
			ret = -ENOMEM;
			break;
		}
		m->firmware_count++;
	}
	kmod_module_info_free_list(info);
	return ret;
}

/*
 * Visits one module: records it and queues what it needs. modules.dep already
 * lists the whole dependency chain, but the softdeps of those dependencies
 * (and the dependencies of softdeps) are only found by walking each one.
 */
static int module_visit(struct kmod_module *mod, const char *module_dir, struct module_queue *q,
			struct builder_module_list *list, struct builder_error *err)
{
	const char *name = kmod_module_get_name(mod);
	const char *path = kmod_module_get_path(mod);
	const char *relative = NULL;
	struct kmod_list *deps, *pre = NULL, *post = NULL;
	size_t dir_len = strlen(module_dir);
	int ret;

	if (module_list_has(list, name))
		return 0;
	if (path) {
		if (strncmp(path, module_dir, dir_len) || path[dir_len] != '/') {
			builder_error_set(err, "module '%s' is at '%s', outside '%s'", name, path,
					  module_dir);
			return -EINVAL;
		}
		relative = path + dir_len + 1;
	}
	ret = module_list_add(list, name, relative);
	if (ret < 0)
		return ret;
	if (path) {
		ret = module_read_firmware(mod, &list->modules[list->count - 1]);
		if (ret < 0) {
			builder_error_set(err, "module '%s' (%s): reading modinfo: %s", name, path,
					  strerror(-ret));
			return ret;
		}
	}

	deps = kmod_module_get_dependencies(mod);
	ret = module_queue_push_list(q, deps);
	kmod_module_unref_list(deps);
	if (ret < 0)
		return ret;
	/* Missing softdep targets are simply absent from the lists, as for modprobe. */
	if (kmod_module_get_softdeps(mod, &pre, &post) == 0) {
		ret = module_queue_push_list(q, pre);
		if (!ret)
			ret = module_queue_push_list(q, post);
		kmod_module_unref_list(pre);
		kmod_module_unref_list(post);
	}
	return ret;
}

int builder_modules_resolve(const struct builder_module_options *options,
			    const char *const *names, size_t count,
			    struct builder_module_list *list, struct builder_error *err)
{
	struct module_queue q = { 0 };
	char *root = NULL, *module_dir = NULL;
	char *config_dirs[4] = { NULL };
	struct kmod_ctx *ctx;
	int ret = 0;

	builder_module_list_clear(list);
	root = realpath(options->moddir, NULL);
	if (!root) {
		ret = -errno;
		builder_error_set(err, "%s: %s", options->moddir, strerror(-ret));
		return ret;
	}
	if (asprintf(&module_dir, "%s/lib/modules/%s", root, options->kver) < 0) {
		ret = -ENOMEM;
		goto out_root;
	}
	if (access(module_dir, R_OK | X_OK) < 0) {
		ret = -errno;
		builder_error_set(err, "%s: %s", module_dir, strerror(-ret));
		goto out_dirs;
	}
	/*
	 * Only the tree's own modprobe configuration counts (missing
	 * directories are skipped by libkmod): the host's /etc/modprobe.d
	 * describes another system and must not change what goes in the image.
	 */
	if (asprintf(&config_dirs[0], "%s/etc/modprobe.d", root) < 0 ||
	    asprintf(&config_dirs[1], "%s/lib/modprobe.d", root) < 0 ||
	    asprintf(&config_dirs[2], "%s/usr/lib/modprobe.d", root) < 0) {
		ret = -ENOMEM;
		goto out_dirs;
	}
	ctx = kmod_new(module_dir, (const char *const *)config_dirs);
	if (!ctx) {
		ret = -ENOMEM;
		builder_error_set(err, "%s: libkmod cannot use it", module_dir);
		goto out_dirs;
	}

	for (size_t i = 0; i < count && !ret; i++) {
		struct kmod_list *found = NULL;

		ret = kmod_module_new_from_lookup(ctx, names[i], &found);
		if (ret < 0) {
			builder_error_set(err, "looking up module '%s': %s", names[i], strerror(-ret));
			break;
		}
		if (!found) {
			builder_error_set(err, "unknown module '%s' (not in %s)", names[i], module_dir);
			ret = -ENOENT;
			break;
		}
		ret = module_queue_push_list(&q, found);
		kmod_module_unref_list(found);
	}
	for (size_t i = 0; i < options->modalias_count && !ret; i++) {
		struct kmod_list *found = NULL;

		ret = kmod_module_new_from_lookup(ctx, options->modaliases[i], &found);
		if (ret < 0) {
			builder_error_set(err, "looking up modalias '%s': %s", options->modaliases[i],
					  strerror(-ret));
			break;
		}
		ret = module_queue_push_list(&q, found);
		kmod_module_unref_list(found);
	}
	/* Pops from the end: the order of the visit does not matter, the result is sorted. */
	while (!ret && q.count) {
		struct kmod_module *mod = q.items[--q.count];

		ret = module_visit(mod, module_dir, &q, list, err);
		kmod_module_unref(mod);
	}
	while (q.count)
		kmod_module_unref(q.items[--q.count]);
	free(q.items);
	kmod_unref(ctx);
	if (ret < 0)
		builder_module_list_clear(list);
	else
		qsort(list->modules, list->count, sizeof(*list->modules), module_compare);

out_dirs:
	for (size_t i = 0; i < 3; i++)
		free(config_dirs[i]);
	free(module_dir);
out_root:
	free(root);
	return ret;
}


static int module_copy_file(const char *from, const char *to, struct builder_error *err)
{
	const char *failed;
	/* No fsync per file: the whole staged tree gets one syncfs before it is put in place. */
	int ret = bci_copy_file(from, to, BCI_COPY_KEEP_MODE, 0, &failed);

	if (ret < 0)
		builder_error_set(err, "%s: %s", failed, strerror(-ret));
	return ret;
}

/* Copies @relative (a path under the module directory) from @from_dir to @to_dir. */
static int module_copy_relative(const char *from_dir, const char *to_dir, const char *relative,
				struct builder_error *err)
{
	char *from = NULL, *to = NULL;
	int ret = -ENOMEM;

	if (asprintf(&from, "%s/%s", from_dir, relative) < 0)
		return -ENOMEM;
	if (asprintf(&to, "%s/%s", to_dir, relative) < 0)
		goto out_from;
	char *slash = strrchr(to, '/');

	*slash = '\0';
	ret = bci_mkdir_p(to, 0755);
	*slash = '/';
	if (ret < 0)
		builder_error_set(err, "%s: %s", to, strerror(-ret));
	else
		ret = module_copy_file(from, to, err);
	free(to);
out_from:
	free(from);
	return ret;
}

/* depmod -b on the staging tree: indexes made for the image, as the target's depmod would. */
static int module_run_depmod(const struct builder_module_options *options, const char *base,
			     struct builder_error *err)
{
	const char *argv[] = { options->depmod ? options->depmod : "depmod", "-b", base,
			       options->kver, NULL };

	return builder_tool_run(argv, NULL, 1, NULL, err);
}

/* Puts the finished "<staging>.tmp" at <staging>, replacing an older tree whole. */
static int module_install_tree(const char *tmp, const char *staging, struct builder_error *err)
{
	struct stat st;
	int fd, ret;

	/* One syncfs for the whole copied tree before it becomes visible under its name. */
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd) < 0) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		builder_error_set(err, "%s: sync: %s", tmp, strerror(-ret));
		return ret;
	}
	close(fd);

	if (lstat(staging, &st) == 0) {
		/* Swap the two trees in one step; the old one ends up at tmp. */
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, staging, RENAME_EXCHANGE) < 0) {
			ret = -errno;
			builder_error_set(err, "%s: cannot replace: %s", staging, strerror(-ret));
			return ret;
		}
		ret = bci_remove_tree(tmp);
		if (ret < 0) {
			builder_error_set(err, "%s: cannot remove the old tree: %s", tmp, strerror(-ret));
			return ret;
		}
	} else if (rename(tmp, staging) < 0) {
		ret = -errno;
		builder_error_set(err, "%s: %s", staging, strerror(-ret));
		return ret;
	}
	return bci_fsync_parent(staging);
}

int builder_modules_stage(const struct builder_module_options *options,
			  const char *const *names, size_t count,
			  struct builder_module_list *list, struct builder_error *err)
{
	static const char *const index_files[] = {
		"modules.order", "modules.builtin", "modules.builtin.modinfo",
	};
	char *tmp = NULL, *from_dir = NULL, *to_dir = NULL, *root = NULL;
	int ret;

	ret = builder_modules_resolve(options, names, count, list, err);
	if (ret < 0)
		return ret;
	root = realpath(options->moddir, NULL);
	if (!root) {
		ret = -errno;
		builder_error_set(err, "%s: %s", options->moddir, strerror(-ret));
		goto out_free;
	}
	if (asprintf(&tmp, "%s.tmp", options->staging) < 0 ||
	    asprintf(&from_dir, "%s/lib/modules/%s", root, options->kver) < 0 ||
	    asprintf(&to_dir, "%s/lib/modules/%s", tmp, options->kver) < 0) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* A leftover of an interrupted run is not worth keeping. */
	ret = bci_remove_tree(tmp);
	if (ret < 0) {
		builder_error_set(err, "%s: cannot remove: %s", tmp, strerror(-ret));
		goto out_free;
	}
	ret = bci_mkdir_p(to_dir, 0755);
	if (ret < 0) {
		builder_error_set(err, "%s: %s", to_dir, strerror(-ret));
		goto out_tmp;
	}
	for (size_t i = 0; i < list->count && !ret; i++)
		if (list->modules[i].relative_path)
			ret = module_copy_relative(from_dir, to_dir, list->modules[i].relative_path, err);
	for (size_t i = 0; i < sizeof(index_files) / sizeof(index_files[0]) && !ret; i++) {
		char *source;

		if (asprintf(&source, "%s/%s", from_dir, index_files[i]) < 0) {
			ret = -ENOMEM;
			break;
		}
		/* Older kernels lack modules.builtin.modinfo; depmod copes. */
		if (access(source, F_OK) == 0)
			ret = module_copy_relative(from_dir, to_dir, index_files[i], err);
		free(source);
	}
	if (!ret)
		ret = module_run_depmod(options, tmp, err);
	if (!ret)
		ret = module_install_tree(tmp, options->staging, err);

out_tmp:
	if (ret < 0)
		bci_remove_tree(tmp);
out_free:
	if (ret < 0)
		builder_module_list_clear(list);
	free(to_dir);
	free(from_dir);
	free(tmp);
	free(root);
	return ret;
}

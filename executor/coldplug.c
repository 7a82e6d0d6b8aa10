// SPDX-License-Identifier: MIT
/*
 * Modalias coldplug, as udev does it at boot: every device the kernel found
 * has a `modalias` file under /sys/devices; the modules whose aliases match
 * it are loaded, so the image works on machines whose network, storage and
 * GPU drivers its configuration does not name. Loaded drivers make new
 * devices appear (virtio_pci's virtio devices, a USB controller's ports), so
 * the walk is repeated until a pass finds nothing new.
 *
 * Refused: modules in coldplug_deny, modules modprobe.d blacklists (as
 * udev applies the blacklist to alias loads), and the pstore back ends that
 * pstore_backends does not name (efi_pstore matches the efivars platform
 * device's alias: a boot told to use no back end would get it anyway). Every
 * path through the root prefix, every load through ex->sys->probe_module.
 */
#include "executor.h"
#include "machine.h"

#include "config.h"
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <libkmod.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* /sys/devices is a few levels deep on any machine; a deeper tree is a loop or a fake. */
#define WALK_DEPTH_MAX 32
/* Loading a driver rarely exposes devices more than two levels down (bus, then device). */
#define PASSES_MAX 8

struct walk {
	struct bci_executor *ex;
	const struct bci_coldplug_plan *skip;
	struct bci_coldplug_plan *plan;
	const char **deny, **pstore;
	size_t deny_count, pstore_count;
	struct bci_coldplug_plan denied;  /* names, each once, for the count */
	int error;
};

/* Module names compare as libkmod normalizes them: '-' and '_' are the same. */
static bool same_module(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	return *a == *b;
}

static bool plan_has(const struct bci_coldplug_plan *plan, const char *name)
{
	for (size_t i = 0; plan && i < plan->count; i++)
		if (same_module(plan->modules[i], name))
			return true;
	return false;
}

static int plan_add(struct bci_coldplug_plan *plan, const char *name)
{
	char **bigger = realloc(plan->modules, (plan->count + 1) * sizeof(*plan->modules));

	if (!bigger)
		return -ENOMEM;
	plan->modules = bigger;
	plan->modules[plan->count] = strdup(name);
	if (!plan->modules[plan->count])
		return -ENOMEM;
	plan->count++;
	return 0;
}

void bci_coldplug_plan_free(struct bci_coldplug_plan *plan)
{
	for (size_t i = 0; i < plan->count; i++)
		free(plan->modules[i]);
	free(plan->modules);
	plan->modules = NULL;
	plan->count = 0;
	plan->denied = 0;
}

/* The pstore back-end modules pstore_backends chooses among (pstore.c). */
static const char *const pstore_modules[] = { "efi_pstore", "ramoops" };

/* @name is a pstore back end that pstore_backends does not name. */
static bool pstore_unwanted(const struct walk *w, const char *name)
{
	bool backend = false;

	for (size_t i = 0; i < sizeof(pstore_modules) / sizeof(*pstore_modules); i++)
		backend = backend || same_module(name, pstore_modules[i]);
	for (size_t i = 0; backend && i < w->pstore_count; i++)
		if (same_module(name, w->pstore[i]))
			return false;
	return backend;
}

/* Already in the kernel (loaded, or built in with parameters): ROOT/sys/module/NAME. */
static bool module_live(const struct bci_executor *ex, const char *name)
{
	char path[PATH_MAX], normalized[256];
	struct stat st;
	size_t i;

	for (i = 0; name[i] && i < sizeof(normalized) - 1; i++)
		normalized[i] = name[i] == '-' ? '_' : name[i];
	normalized[i] = '\0';
	return bci_path(ex->root, path, "/sys/module/%s", normalized) == 0 && stat(path, &st) == 0;
}

/* @name is in the libkmod list @list. */
static bool list_has(struct kmod_list *list, const char *name)
{
	struct kmod_list *item;
	bool found = false;

	kmod_list_foreach(item, list) {
		struct kmod_module *module = kmod_module_get_module(item);
		found = found || strcmp(kmod_module_get_name(module), name) == 0;
		kmod_module_unref(module);
	}
	return found;
}

/* The modules matching one device's modalias go into the plan, in libkmod's order. */
static void plan_alias(struct walk *w, const char *alias)
{
	struct kmod_list *found = NULL, *loadable = NULL, *allowed = NULL, *item;
	struct kmod_ctx *ctx = w->ex->kmod;
	int ret;

	ret = kmod_module_new_from_lookup(ctx, alias, &found);
	if (ret < 0 || !found) {
		/* No module for it: the common case for most devices. */
		return;
	}
	/* Built in: nothing to load. Blacklisted by modprobe.d: refused, as udev does. */
	ret = kmod_module_apply_filter(ctx, KMOD_FILTER_BUILTIN, found, &loadable);
	if (ret == 0)
		ret = kmod_module_apply_filter(ctx, KMOD_FILTER_BLACKLIST, loadable, &allowed);
	if (ret < 0) {
		w->error = ret;
		goto out;
	}
	kmod_list_foreach(item, loadable) {
		struct kmod_module *module = kmod_module_get_module(item);
		const char *name = kmod_module_get_name(module);
		bool denied = !list_has(allowed, name);

		for (size_t i = 0; i < w->deny_count && !denied; i++)
			denied = same_module(name, w->deny[i]);
		denied = denied || pstore_unwanted(w, name);
		if (denied) {
			if (!plan_has(&w->denied, name) && plan_add(&w->denied, name) < 0)
				w->error = -ENOMEM;
		} else if (!plan_has(w->plan, name) && !plan_has(w->skip, name) &&
			   !module_live(w->ex, name)) {
			if (plan_add(w->plan, name) < 0)
				w->error = -ENOMEM;
		}
		kmod_module_unref(module);
	}
out:
	kmod_module_unref_list(allowed);
	kmod_module_unref_list(loadable);
	kmod_module_unref_list(found);
}

/* Depth first, names in byte order, symbolic links never followed (sysfs is full of them). */
static void walk_dir(struct walk *w, const char *dir, int depth)
{
	struct dirent **names;
	char path[PATH_MAX], *text;
	struct stat st;
	int n;

	if (depth > WALK_DEPTH_MAX)
		return;
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return;
	/* The device's own modalias before its children's: parents (buses) load first. */
	for (int i = 0; i < n && !w->error; i++) {
		if (strcmp(names[i]->d_name, "modalias") != 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/modalias", dir) < (int)sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    bci_read_file(path, &text, NULL, 4096) == 0) {
			text[strcspn(text, "\n")] = '\0';
			if (text[0])
				plan_alias(w, text);
			free(text);
		}
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		if (!w->error && name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk_dir(w, path, depth + 1);
		free(names[i]);
	}
	free(names);
}

int bci_coldplug_plan(struct bci_executor *ex, const struct bci_coldplug_plan *skip,
		      struct bci_coldplug_plan *plan)
{
	struct walk w = { .ex = ex, .skip = skip, .plan = plan };
	char devices[PATH_MAX], *storage, *pstore_storage;
	int ret;

	memset(plan, 0, sizeof(*plan));
	if (!ex->kmod)
		return -ENODEV;
	ret = bci_config_get_list(ex->config, "coldplug_deny", &storage, &w.deny, &w.deny_count);
	if (ret < 0)
		return ret;
	ret = bci_config_get_list(ex->config, "pstore_backends", &pstore_storage, &w.pstore,
				  &w.pstore_count);
	if (ret < 0) {
		free(w.deny);
		free(storage);
		return ret;
	}
	ret = bci_path(ex->root, devices, "/sys/devices");
	if (ret == 0)
		walk_dir(&w, devices, 0);
	plan->denied = w.denied.count;
	bci_coldplug_plan_free(&w.denied);
	free(w.deny);
	free(storage);
	free(w.pstore);
	free(pstore_storage);
	if (ret == 0)
		ret = w.error;
	if (ret < 0)
		bci_coldplug_plan_free(plan);
	return ret;
}

static int load_one(struct bci_executor *ex, const char *name)
{
	struct kmod_module *module;
	int ret = kmod_module_new_from_name(ex->kmod, name, &module);

	if (ret < 0)
		return ret;
	ret = ex->sys->probe_module(module, NULL);
	kmod_module_unref(module);
	return ret;
}

int bci_coldplug_run(struct bci_executor *ex)
{
	struct bci_coldplug_plan done = { 0 }, plan;
	size_t loaded = 0, denied = 0;
	int ret = 0;

	if (strcmp(bci_config_get(ex->config, "coldplug"), "yes") != 0)
		return 0;
	for (int pass = 0; pass < PASSES_MAX; pass++) {
		ret = bci_coldplug_plan(ex, &done, &plan);
		if (ret < 0) {
			bci_error("coldplug: cannot walk /sys/devices: %s", strerror(-ret));
			break;
		}
		if (plan.denied > denied)
			denied = plan.denied;
		for (size_t i = 0; i < plan.count && ret == 0; i++) {
			int probe = load_one(ex, plan.modules[i]);
			if (probe < 0)
				bci_warn("coldplug: module %s: %s", plan.modules[i], strerror(-probe));
			else
				loaded++;
			ret = plan_add(&done, plan.modules[i]);
		}
		size_t count = plan.count;
		bci_coldplug_plan_free(&plan);
		if (ret < 0 || count == 0)
			break;
	}
	if (ret == 0 && (done.count > 0 || denied > 0)) {
		/* One line for the console: what the machine's devices brought in. */
		char line[1024] = "";
		size_t used = 0;
		for (size_t i = 0; i < done.count && used < sizeof(line) - 1; i++)
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s",
						 i ? " " : "", done.modules[i]);
		bci_say("coldplug: loaded %zu module%s by modalias (%s); %zu refused by "
			"coldplug_deny, pstore_backends or a blacklist", loaded, loaded == 1 ? "" : "s", line, denied);
	}
	bci_coldplug_plan_free(&done);
	return ret < 0 ? ret : (int)loaded;
}

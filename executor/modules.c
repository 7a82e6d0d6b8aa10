// SPDX-License-Identifier: MIT
/* Kernel modules through libkmod, against ROOT/lib/modules/<release>. */
#include "executor.h"

#include "config.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_release(struct bci_executor *ex)
{
	char path[PATH_MAX], *text = NULL;
	int ret = bci_path(ex->root, path, "/proc/sys/kernel/osrelease");

	if (ret == 0)
		ret = bci_read_file(path, &text, NULL, 1024);
	if (ret < 0)
		return ret;
	text[strcspn(text, "\n")] = '\0';
	if (text[0] == '\0' || strlen(text) >= sizeof(ex->release) || strchr(text, '/')) {
		free(text);
		return -EINVAL;
	}
	strcpy(ex->release, text);
	free(text);
	return 0;
}

/*
 * The firmware loader names a file it loaded only in a debug message: turned on
 * (dynamic debug, when the kernel has it) before any driver loads, so that the
 * boot's environment can list every firmware file requested, not only the
 * missing ones. Debug records are below every dmesg-warn level.
 */
static void log_firmware_requests(const struct bci_executor *ex)
{
	static const char command[] = "module firmware_class +p\n";
	char path[PATH_MAX];
	int fd;

	if (bci_path(ex->root, path, "/proc/dynamic_debug/control") < 0)
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, command, sizeof(command) - 1) < 0)
		bci_warn("cannot turn on the firmware loader's messages: %s", strerror(errno));
	close(fd);
}

int bci_modules_init(struct bci_executor *ex)
{
	char dir[PATH_MAX], modprobe_d[PATH_MAX], lib_modprobe_d[PATH_MAX];
	const char *config_paths[3] = { modprobe_d, lib_modprobe_d, NULL };
	int ret;

	ret = read_release(ex);
	if (ret < 0) {
		bci_error("cannot read the kernel release: %s", strerror(-ret));
		return ret;
	}
	if (bci_path(ex->root, dir, "/lib/modules/%s", ex->release) < 0 ||
	    bci_path(ex->root, modprobe_d, "/etc/modprobe.d") < 0 ||
	    bci_path(ex->root, lib_modprobe_d, "/lib/modprobe.d") < 0)
		return -ENAMETOOLONG;
	ex->kmod = kmod_new(dir, config_paths);
	if (!ex->kmod) {
		bci_error("libkmod cannot use %s", dir);
		return -ENOMEM;
	}
	/* Without its indexes, libkmod would fall back to slow text files or fail oddly. */
	ret = kmod_load_resources(ex->kmod);
	if (ret < 0) {
		bci_error("no usable module indexes in %s (run depmod for the image): %s", dir,
			  strerror(-ret));
		return ret;
	}
	log_firmware_requests(ex);
	return 0;
}

void bci_modules_exit(struct bci_executor *ex)
{
	if (ex->kmod)
		kmod_unref(ex->kmod);
	ex->kmod = NULL;
}

int bci_modules_load(struct bci_executor *ex, const char *name)
{
	return bci_modules_load_with(ex, name, NULL);
}

int bci_modules_load_with(struct bci_executor *ex, const char *name, const char *options)
{
	struct kmod_list *list = NULL, *item;
	int ret, loaded = 0;

	if (!ex->kmod)
		return -ENODEV;
	ret = kmod_module_new_from_lookup(ex->kmod, name, &list);
	if (ret < 0) {
		bci_error("module %s: lookup failed: %s", name, strerror(-ret));
		return ret;
	}
	if (!list) {
		bci_error("module %s: not found in /lib/modules/%s", name, ex->release);
		return -ENOENT;
	}
	kmod_list_foreach(item, list) {
		struct kmod_module *module = kmod_module_get_module(item);
		ret = ex->sys->probe_module(module, options);
		if (ret < 0)
			bci_error("module %s (%s): %s", name, kmod_module_get_name(module),
				  strerror(-ret));
		else
			loaded++;
		kmod_module_unref(module);
		if (ret < 0)
			break;
	}
	kmod_module_unref_list(list);
	return ret < 0 ? ret : loaded;
}

int bci_modules_load_configured(struct bci_executor *ex)
{
	const char **names;
	char *storage;
	size_t count;
	int ret = bci_config_get_list(ex->config, "modules", &storage, &names, &count);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < count && ret >= 0; i++)
		ret = bci_modules_load(ex, names[i]);
	if (ret >= 0 && count > 0)
		bci_say("loaded %zu configured module%s", count, count == 1 ? "" : "s");
	free(names);
	free(storage);
	return ret < 0 ? ret : 0;
}

// SPDX-License-Identifier: MIT
#include "kernel_input.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "tool.h"

void builder_kernel_clear(struct builder_kernel *k)
{
	free(k->vmlinuz);
	free(k->moddir);
	free(k->kver);
	free(k->origin);
	free(k->modules_origin);
	k->vmlinuz = k->moddir = k->kver = k->origin = k->modules_origin = NULL;
}

static int kernel_need_file(const char *what, const char *path, struct builder_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		builder_error_set(err, "%s %s: %s", what, path, strerror(errno));
		return -ENOENT;
	}
	if (!S_ISREG(st.st_mode)) {
		builder_error_set(err, "%s %s: not a regular file", what, path);
		return -ENOENT;
	}
	return 0;
}

/* The one entry of ROOT/lib/modules, when @kver is not given. */
static int kernel_find_kver(const char *root, const char *kver, char **out, struct builder_error *err)
{
	char *dir;
	DIR *d;
	struct dirent *e;
	int found = 0;

	if (kver) {
		*out = strdup(kver);
		return *out ? 0 : -ENOMEM;
	}
	if (asprintf(&dir, "%s/lib/modules", root) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d) {
		builder_error_set(err, "modules folder %s: %s", dir, strerror(errno));
		free(dir);
		return -ENOENT;
	}
	*out = NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		found++;
		if (found == 1 && !(*out = strdup(e->d_name)))
			break;
	}
	closedir(d);
	if (found != 1) {
		builder_error_set(err, "modules folder %s: %s kernel release; name one with --kver", dir,
				  found ? "more than one" : "no");
		free(*out);
		*out = NULL;
		free(dir);
		return -ENOENT;
	}
	free(dir);
	return *out ? 0 : -ENOMEM;
}

/* ROOT from @modules (a root or lib/modules/<kver> itself), checked for modules.dep. */
static int kernel_open_modules(const char *modules, const char *kver, struct builder_kernel *k,
			       struct builder_error *err)
{
	char *real = realpath(modules, NULL), *dep = NULL;
	struct stat st;
	int ret = 0;

	if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		builder_error_set(err, "modules folder %s: %s", modules, real ? "not a folder" : strerror(errno));
		free(real);
		return -ENOENT;
	}
	if (asprintf(&dep, "%s/modules.order", real) < 0) {
		free(real);
		return -ENOMEM;
	}
	if (access(dep, F_OK) == 0) {
		/* lib/modules/<kver> itself: the root is three levels up. */
		char *slash = strrchr(real, '/');
		size_t tail = strlen("/lib/modules");

		if (!slash || (size_t)(slash - real) < tail || strncmp(slash - tail, "/lib/modules", tail)) {
			builder_error_set(err, "modules folder %s: not under a lib/modules folder", real);
			ret = -ENOENT;
			goto out;
		}
		k->kver = strdup(slash + 1);
		slash[-(long)tail] = '\0';
		k->moddir = strdup(real[0] ? real : "/");
		if (!k->kver || !k->moddir)
			ret = -ENOMEM;
	} else {
		k->moddir = strdup(real);
		ret = k->moddir ? kernel_find_kver(real, kver, &k->kver, err) : -ENOMEM;
	}
	if (ret < 0)
		goto out;
	free(dep);
	if (asprintf(&dep, "%s/lib/modules/%s/modules.dep", k->moddir, k->kver) < 0) {
		dep = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (access(dep, F_OK) < 0) {
		builder_error_set(err, "modules folder %s: no %s (run depmod -b %s %s)", modules, dep,
				  k->moddir, k->kver);
		ret = -ENOENT;
	}
out:
	free(dep);
	free(real);
	return ret;
}

static int kernel_open_deb(const struct builder_kernel_source *s, struct builder_kernel *k,
			   struct builder_error *err)
{
	char *root = NULL, *pattern = NULL;
	glob_t g = { 0 };
	int ret = kernel_need_file("kernel package", s->deb, err);

	if (ret < 0)
		return ret;
	if (asprintf(&root, "%s/kernel-deb", s->scratch) < 0)
		return -ENOMEM;
	ret = bci_mkdir_p(root, 0755);
	if (ret < 0) {
		builder_error_set(err, "%s: %s", root, strerror(-ret));
		goto out;
	}
	{
		const char *argv[] = { "dpkg-deb", "-x", s->deb, root, NULL };

		ret = builder_tool_run(argv, NULL, 1, NULL, err);
		if (ret < 0)
			goto out;
	}
	ret = kernel_find_kver(root, s->kver, &k->kver, err);
	if (ret < 0) {
		builder_error_set(err, "kernel package %s: no lib/modules/<release> inside", s->deb);
		goto out;
	}
	if (asprintf(&pattern, "%s/boot/vmlinuz-%s", root, k->kver) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	if (access(pattern, R_OK) < 0) {
		builder_error_set(err, "kernel package %s: no boot/vmlinuz-%s inside", s->deb, k->kver);
		ret = -ENOENT;
		goto out;
	}
	k->vmlinuz = pattern;
	pattern = NULL;
	k->moddir = root;
	root = NULL;
	/* A .deb ships no module indexes: make them as the target's depmod would. */
	{
		const char *argv[] = { "depmod", "-b", k->moddir, k->kver, NULL };

		ret = builder_tool_run(argv, NULL, 1, NULL, err);
	}
out:
	globfree(&g);
	free(pattern);
	free(root);
	return ret;
}

/* The manifest names inputs absolutely: the same wherever the build ran from. */
static int kernel_set_origin(struct builder_kernel *k, const char *given, struct builder_error *err)
{
	k->origin = realpath(given, NULL);
	if (!k->origin) {
		int ret = -errno;

		builder_error_set(err, "%s: %s", given, strerror(-ret));
		return ret;
	}
	return 0;
}

int builder_kernel_open(const struct builder_kernel_source *s, struct builder_kernel *k,
			struct builder_error *err)
{
	int given = !!s->deb + !!s->tree + !!s->vmlinuz;
	int ret;

	memset(k, 0, sizeof(*k));
	if (given != 1) {
		builder_error_set(err, "missing kernel: give exactly one of --kernel-deb, --kernel-tree, --vmlinuz");
		return -EINVAL;
	}
	if (s->deb) {
		ret = kernel_open_deb(s, k, err);
		if (!ret)
			ret = kernel_set_origin(k, s->deb, err);
		/* The package is unpacked in the build's scratch folder: name the package instead. */
		if (!ret && asprintf(&k->modules_origin, "%s:", k->origin) < 0) {
			k->modules_origin = NULL;
			ret = -ENOMEM;
		}
		goto out;
	}
	if (!s->modules) {
		builder_error_set(err, "missing modules folder: --%s needs --modules DIR",
				  s->tree ? "kernel-tree" : "vmlinuz");
		return -EINVAL;
	}
	if (s->tree) {
		char *release_file = NULL, *release = NULL;
		size_t len;

		if (asprintf(&k->vmlinuz, "%s/arch/x86/boot/bzImage", s->tree) < 0) {
			k->vmlinuz = NULL;
			return -ENOMEM;
		}
		ret = kernel_need_file("kernel", k->vmlinuz, err);
		if (ret < 0)
			goto out;
		/* The tree says which release it built: pick that one among the modules. */
		if (!s->kver && asprintf(&release_file, "%s/include/config/kernel.release", s->tree) >= 0 &&
		    bci_read_file(release_file, &release, &len, 256) == 0)
			release[strcspn(release, "\n")] = '\0';
		free(release_file);
		ret = kernel_open_modules(s->modules, s->kver ? s->kver : release, k, err);
		free(release);
	} else {
		k->vmlinuz = strdup(s->vmlinuz);
		if (!k->vmlinuz)
			return -ENOMEM;
		ret = kernel_need_file("kernel", k->vmlinuz, err);
		if (!ret)
			ret = kernel_open_modules(s->modules, s->kver, k, err);
	}
	if (!ret)
		ret = kernel_set_origin(k, s->tree ? s->tree : s->vmlinuz, err);
	if (!ret && !(k->modules_origin = strdup(k->moddir)))
		ret = -ENOMEM;
out:
	if (ret < 0)
		builder_kernel_clear(k);
	return ret;
}

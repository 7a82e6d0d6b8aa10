// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeroot.h"

#include "executor.h"
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* $BUILD (make check sets it), else build/ of the current directory; absolute either way,
 * since the executor under test resolves paths inside its fake root. */
static const char *build_dir(void)
{
	static char dir[PATH_MAX];
	const char *build = getenv("BUILD");

	if (!dir[0] && !realpath(build ? build : "build", dir))
		snprintf(dir, sizeof(dir), "%s", build ? build : "build");
	return dir;
}

/* The release of the unpacked test kernel (build/kernel/release), with its newline. */
static const char *kernel_release(void)
{
	static char release[128];
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/kernel/release", build_dir());
	f = fopen(path, "r");
	if (!f || !fgets(release, sizeof(release), f))
		snprintf(release, sizeof(release), "0.0.0-no-test-kernel\n");
	if (f)
		fclose(f);
	return release;
}

const char *fixture_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/host/bin/fixtures/%s", build_dir(), name);
	if (access(path, X_OK) != 0)
		fail_msg("fixture %s not built (make %s)", name, path);
	return path;
}

void fakeroot_write(struct fakeroot *root, const char *path, const char *text)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", root->dir, path);
	char *slash = strrchr(full, '/');
	*slash = '\0';
	assert_int_equal(bci_mkdir_p(full, 0755), 0);
	*slash = '/';
	assert_int_equal(bci_write_file_atomic(full, text, strlen(text), 0644), 0);
}

void fakeroot_create(struct fakeroot *root, const char *cmdline)
{
	char cmd[4096];

	snprintf(root->dir, sizeof(root->dir), "/tmp/bootci-fakeroot.XXXXXX");
	assert_non_null(mkdtemp(root->dir));
	snprintf(cmd, sizeof(cmd), "%s\n", cmdline);
	fakeroot_write(root, "/proc/cmdline", cmd);
	fakeroot_write(root, "/proc/sys/kernel/osrelease", kernel_release());
	fakeroot_write(root, "/proc/filesystems", "nodev\tsysfs\nnodev\tproc\n\text4\n");
	fakeroot_write(root, "/dev/null", "");
	fakeroot_write(root, "/sys/block/.keep", "");
}

void fakeroot_remove(struct fakeroot *root)
{
	run("rm -rf '%s'", root->dir);
}

void fakeroot_add_disk(struct fakeroot *root, const char *disk, const char *partuuid,
		       const char *label)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/%s1/partition", disk, disk);
	fakeroot_write(root, path, "1\n");
	run("truncate -s 12M '%s/dev/%s'", root->dir, disk);
	if (partuuid)
		run("echo 'label: gpt\nstart=2048, size=16384, uuid=%s' | sfdisk -q '%s/dev/%s' >/dev/null",
		    partuuid, root->dir, disk);
	run("truncate -s 8M '%s/dev/%s1'", root->dir, disk);
	if (label)
		run("mkfs.ext4 -q -F -L '%s' '%s/dev/%s1'", label, root->dir, disk);
}

int fakeroot_add_kernel_modules(struct fakeroot *root)
{
	char target[PATH_MAX + 256], link[PATH_MAX + 256], abs[PATH_MAX], release[128];

	snprintf(release, sizeof(release), "%s", kernel_release());
	release[strcspn(release, "\n")] = '\0';
	snprintf(target, sizeof(target), "%s/kernel/root/lib/modules/%s/modules.dep.bin",
		 build_dir(), release);
	if (access(target, R_OK) != 0 || !realpath(build_dir(), abs))
		return -1;
	snprintf(target, sizeof(target), "%s/kernel/root/lib/modules/%s", abs, release);
	snprintf(link, sizeof(link), "%s/lib/modules", root->dir);
	assert_int_equal(bci_mkdir_p(link, 0755), 0);
	strcat(link, "/");
	strcat(link, release);
	assert_int_equal(symlink(target, link), 0);
	return 0;
}

const char *fakeroot_read(struct fakeroot *root, const char *path)
{
	static char buf[1 << 20];
	char full[PATH_MAX], *text;
	size_t len;

	snprintf(full, sizeof(full), "%s%s", root->dir, path);
	if (bci_read_file(full, &text, &len, sizeof(buf) - 1) < 0)
		return NULL;
	memcpy(buf, text, len + 1);
	free(text);
	return buf;
}

void fakeroot_executor(struct fakeroot *root, struct bci_executor *ex, const char *cmdline)
{
	fakeroot_create(root, cmdline);
	ex->root = root->dir;
	ex->sys = &bci_sys_dry;
	ex->signal_fd = -1;
	ex->watchdog_fd = -1;
	assert_int_equal(bci_settings_load(ex), 0);
	snprintf(ex->run_dir, sizeof(ex->run_dir), "%.*s/results/runs/t", PATH_MAX - 32, root->dir);
	assert_int_equal(bci_mkdir_p(ex->run_dir, 0755), 0);
	snprintf(ex->release, sizeof(ex->release), "test");
}

void fakeroot_executor_release(struct fakeroot *root, struct bci_executor *ex)
{
	bci_config_free(ex->config);
	ex->config = NULL;
	if (ex->signal_fd >= 0)
		close(ex->signal_fd);
	ex->signal_fd = -1;
	fakeroot_remove(root);
}

int fakeroot_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

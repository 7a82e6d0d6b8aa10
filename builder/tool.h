/* SPDX-License-Identifier: MIT */
/*
 * Runs the outside tools the builder drives (depmod, dpkg-deb, objcopy,
 * sfdisk, mkfs.*, mtools) and waits for them. The program is looked up in
 * PATH, then /usr/sbin and /sbin (mkfs and sfdisk live there and a non-root
 * PATH often lacks them) before fork, so the child only calls execve().
 */
#ifndef BUILDER_TOOL_H
#define BUILDER_TOOL_H

#include "builder_error.h"

/*
 * Runs argv[0] with @argv, the builder's environment plus @extra_env
 * ("NAME=value" strings, NULL-terminated; may be NULL; one replaces the
 * builder's variable of the same name). The tool's stdout goes
 * to /dev/null when @quiet (its stderr always stays visible: it says why it
 * failed); its stdin is @stdin_path when not NULL. Returns 0 when it exits 0; -ENOENT (not found) or -EIO (failed,
 * with the command and its status in @err).
 */
int builder_tool_run(const char *const *argv, const char *const *extra_env, int quiet,
		const char *stdin_path, struct builder_error *err);

/* The absolute path of @name as builder_tool_run() would find it; malloc'ed, or NULL. */
char *builder_tool_find(const char *name);

#endif

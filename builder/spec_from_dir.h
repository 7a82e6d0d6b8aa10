/* SPDX-License-Identifier: MIT */
/*
 * Describes a directory tree in gen_init_cpio syntax so it can be put in an
 * image as it is (like the kernel's usr/gen_initramfs.sh does for a directory):
 * every entry under @dir becomes a line naming it as @dest/<relative path>,
 * with its permission bits, uid and gid 0, files pointing back at their
 * absolute source path. @dir itself is not listed: @dest and its parents come
 * from another spec or are added by builder_spec_finalize().
 */
#ifndef BUILDER_SPEC_FROM_DIR_H
#define BUILDER_SPEC_FROM_DIR_H

#include <stddef.h>

#include "message.h"

/*
 * On success *@text is a malloc'ed, NUL-terminated spec (lines sorted by image
 * path) owned by the caller, and *@len its length. Returns 0 or -errno; a name
 * the syntax cannot carry (whitespace, control characters, "${") is -EINVAL.
 */
int builder_spec_from_dir(const char *dir, const char *dest, char **text, size_t *len,
			  char *err, size_t err_size);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * What a dynamically linked program needs, found by reading its ELF headers
 * (never by running it or ldd): the ELF interpreter (PT_INTERP) and the
 * DT_NEEDED libraries, resolved the way the target's glibc loader would:
 *   1. a name with a '/' is a path;
 *   2. DT_RPATH of the object, then of the objects that loaded it, when the
 *      object has no DT_RUNPATH;
 *   3. DT_RUNPATH of the object itself (never inherited);
 *   4. the directories of the target's /etc/ld.so.conf (what ld.so.cache
 *      is built from), then the standard directories of Debian's loader:
 *      /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /lib, /usr/lib.
 * $ORIGIN, ${ORIGIN}, $LIB and $PLATFORM are expanded; $ORIGIN is the
 * object's folder in the image, so a library found next to an IGT binary in
 * its install prefix keeps the same relative place in the image. A candidate of another
 * ELF class or machine is skipped, as the loader skips it.
 *
 * Only ELF64 little-endian files are understood (the images are x86-64).
 */
#ifndef BUILDER_ELF_DEPS_H
#define BUILDER_ELF_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "message.h"
#include "strv.h"

struct builder_elf_info {
	uint16_t machine;
	bool dynamic;		/* has PT_DYNAMIC */
	char *interp;		/* PT_INTERP, or NULL */
	char **needed;		/* DT_NEEDED in file order */
	size_t needed_count;
	char *rpath, *runpath;	/* raw strings, or NULL */
};

void builder_elf_info_clear(struct builder_elf_info *info);

/*
 * Parses @len bytes of an ELF file. -ENOEXEC when it is not ELF at all (a
 * script, data), -ENOTSUP for ELF32 or big-endian, -EINVAL for a damaged
 * file (message in @err); 0 otherwise, with @info filled (owned by it).
 */
int builder_elf_parse(const uint8_t *buf, size_t len, const char *name,
		      struct builder_elf_info *info, char *err, size_t err_size);

/* builder_elf_parse() on the file at @path. */
int builder_elf_read(const char *path, struct builder_elf_info *info, char *err, size_t err_size);

/* One file the closure puts in the image. */
struct builder_elf_file {
	char *source;		/* host path to read */
	char *image_path;	/* absolute path inside the image */
	char *needed_by;	/* image path of the first object that needed it (NULL for roots) */
	char *link_target;	/* non-NULL: a symlink to this in the image, not a copy of source */
	char *script_interpreter; /* a script root: the absolute path its "#!" line names */
};

struct builder_elf_closure {
	char *sysroot;				/* the target's root on the host, "" for "/" */
	struct builder_elf_file *files;		/* roots first, then what they pulled in */
	size_t count;
	struct bci_strv search_dirs;		/* ld.so.conf + standard dirs, image paths */
};

/*
 * Reads the sysroot's ld.so.conf (with its includes). The image carries no
 * ld.so.cache, so its loader only searches the standard directories: a
 * library found through an ld.so.conf directory is placed in
 * /usr/lib/x86_64-linux-gnu, where the image's loader looks. Returns 0 or -errno.
 */
int builder_elf_closure_init(struct builder_elf_closure *closure, const char *sysroot,
			     char *err, size_t err_size);
void builder_elf_closure_free(struct builder_elf_closure *closure);

/*
 * Adds the program at host path @source as @image_path, and everything it
 * needs. An interpreter that is a symlink in the sysroot (Debian's
 * /lib64/ld-linux-x86-64.so.2) is one in the image too, beside its target.
 * A script's "#!" interpreter is noted in its entry, for the image to provide
 * (it may come from a spec, as a busybox /bin/sh does); one that is not an
 * absolute path is -EINVAL naming it. A file that is not ELF (a script) is added alone; a static program
 * brings nothing. An unresolved library is -ENOENT naming the library and
 * the program that needs it.
 */
int builder_elf_closure_add(struct builder_elf_closure *closure, const char *source,
			    const char *image_path, char *err, size_t err_size);

#endif

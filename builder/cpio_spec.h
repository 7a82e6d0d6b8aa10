/* SPDX-License-Identifier: MIT */
/*
 * The initramfs contents, in the kernel's gen_init_cpio syntax
 * (usr/gen_init_cpio.c), one entry per line:
 *
 *   file  <name> <location> <mode> <uid> <gid> [<hard link name>...]
 *   dir   <name> <mode> <uid> <gid>
 *   nod   <name> <mode> <uid> <gid> <b|c> <major> <minor>
 *   slink <name> <target> <mode> <uid> <gid>
 *   pipe  <name> <mode> <uid> <gid>
 *   sock  <name> <mode> <uid> <gid>
 *
 * '#' starts a comment line; blank lines are ignored; <mode> is octal
 * permission bits (at most 07777); ${VAR} in a file's <location> is replaced by
 * the variable's value, and an unset variable is an error.
 *
 * Several specs may be parsed into one struct builder_spec; then
 * builder_spec_finalize() sorts the entries by path, rejects duplicates and
 * adds the parent directories nobody declared, because the kernel's initramfs
 * unpacker does not create missing parents.
 */
#ifndef BUILDER_CPIO_SPEC_H
#define BUILDER_CPIO_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "builder_error.h"
#include "strv.h"

enum builder_entry_type {
	BUILDER_ENTRY_FILE,
	BUILDER_ENTRY_DIR,
	BUILDER_ENTRY_NOD,
	BUILDER_ENTRY_SLINK,
	BUILDER_ENTRY_PIPE,
	BUILDER_ENTRY_SOCK,
};

#define BUILDER_NO_LINK_GROUP SIZE_MAX

struct builder_entry {
	char *path;		/* normalized: no leading, trailing or doubled '/' */
	enum builder_entry_type type;
	unsigned int mode;	/* permission bits only, <= 07777 */
	uint32_t uid, gid;
	char *location;		/* FILE: source after ${VAR} expansion; SLINK: target */
	char dev_kind;		/* NOD: 'b' or 'c' */
	unsigned int dev_major, dev_minor;
	/* FILE: entries made by one `file` line share a group (hard links). */
	size_t link_group;
	const char *origin;	/* spec name, owned by the struct builder_spec */
	unsigned int line;	/* 0 for parents added by finalize */
	size_t order;		/* position of declaration, for reporting the later duplicate */
};

struct builder_spec {
	struct builder_entry *entries;
	size_t count, capacity;
	struct bci_strv origins; /* copies of the spec names the entries point into */
	size_t link_groups;
	bci_lookup_fn env_lookup;
	void *env_data;
};

/* Returns a new empty spec (NULL on ENOMEM) looking ${VAR} up with getenv(). */
struct builder_spec *builder_spec_new(void);
void builder_spec_free(struct builder_spec *spec);

/* Replaces getenv() for ${VAR}: tests and the fuzzer must not depend on the environment. */
void builder_spec_set_env_lookup(struct builder_spec *spec, bci_lookup_fn fn, void *data);

/*
 * Appends the entries of @len bytes of spec text; @name is used in messages
 * ("NAME:LINE: what"). On error nothing of this buffer is kept. Returns 0,
 * -EINVAL (bad input, message in @err) or -ENOMEM.
 */
int builder_spec_parse(struct builder_spec *spec, const char *name, const char *buf,
		       size_t len, struct builder_error *err);

/* builder_spec_parse() on the contents of the file @path. */
int builder_spec_parse_file(struct builder_spec *spec, const char *path, struct builder_error *err);

/*
 * Sorts entries by path (bytewise, so every parent precedes its children),
 * rejects a path declared twice or a parent that is not a directory, and adds
 * each missing parent as a 0755 root:root directory. Returns 0, -EINVAL or -ENOMEM.
 */
int builder_spec_finalize(struct builder_spec *spec, struct builder_error *err);

#endif

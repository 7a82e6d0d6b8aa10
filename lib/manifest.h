/* SPDX-License-Identifier: MIT */
/*
 * manifest.json: what an uploaded run archive says about itself. `collect`
 * writes it at the top of every archive it sends; `serve` and the store's
 * ingest read it back and check the archive's files against it. This module
 * is the format's only reader and writer.
 *
 * The format (version 1), one JSON object, UTF-8:
 *
 *   {
 *     "format": "bootci-manifest",
 *     "format_version": 1,
 *     "run_id": "igt1",                    a word: [A-Za-z0-9._-], 1..128, not "." or ".."
 *     "image_id": "test-6.1.0-42",         the test image the run booted (free text)
 *     "machine": "m1",                     the machine's identity, a word like run_id
 *     "kernel": "6.1.0-42-amd64",          the kernel under test (its release)
 *     "cmdline": "console=ttyS0 ...",      its command line
 *     "versions": { "igt": "1.28", "bootci": "0.1" },
 *     "boots": {                           one object per boot folder of the run
 *       "boot-001": { "key": "value", ... } the boot's environment: string values,
 *     },                                    keys and meaning defined by the executor
 *     "efi": {                             the machine's EFI boot entries at collect time
 *       "boot_current": 3,                 BootCurrent, or null when unknown
 *       "boot_order": [ 1, 3, 0 ],
 *       "entries": [ { "number": 1, "label": "bootci known-good",
 *                      "active": true, "device_path": "HD(1,GPT,...)/File(...)" } ]
 *     },
 *     "files": [                           every file of the run folder but manifest.json,
 *       { "path": "journal.txt", "size": 1234,   relative to the run folder,
 *         "sha256": "<64 lowercase hex>" }       sorted by path (bytewise)
 *     ]
 *   }
 *
 * Every member is required (strings may be empty except the words). The reader
 * is strict: bad JSON, a member missing, of the wrong type or unknown, a
 * format_version other than 1, a file path that is absolute, has an empty,
 * "." or ".." component or one of more than NAME_MAX (255) bytes, a control
 * character or more than BCI_MANIFEST_PATH_MAX bytes, the same path twice,
 * and a path below another file's (a path is a file or a folder, not both),
 * are each an error naming the member at fault (files[3].path: ...).
 * Numbers are integers.
 *
 * Ownership: a struct bci_manifest owns every string and array it points to;
 * bci_manifest_free() releases them all. Functions return 0 or -errno and
 * write a one-line message into @err on failure.
 */
#ifndef BCI_MANIFEST_H
#define BCI_MANIFEST_H

#include "arena.h"
#include "sha256.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BCI_MANIFEST_NAME	  "manifest.json"
#define BCI_MANIFEST_FORMAT	  "bootci-manifest"
#define BCI_MANIFEST_VERSION	  1
/* Longest relative path accepted (bytes), and longest run id / machine name. */
#define BCI_MANIFEST_PATH_MAX	  1024
#define BCI_MANIFEST_WORD_MAX	  128

struct bci_manifest_file {
	char *path;
	uint64_t size;
	char sha256[BCI_SHA256_HEX_LEN + 1];	/* lowercase hex */
};

struct bci_manifest_pair {
	char *key;
	char *value;
};

struct bci_manifest_boot {
	char *name;				/* the boot folder's name, a single component */
	struct bci_manifest_pair *env;
	size_t env_count;
};

struct bci_manifest_efi_entry {
	unsigned number;			/* Boot#### (0..0xffff) */
	char *label;
	bool active;
	char *device_path;			/* text form, may be empty */
};

struct bci_manifest {
	int format_version;
	char *run_id;
	char *image_id;
	char *machine;
	char *kernel;
	char *cmdline;
	char *igt_version;
	char *bootci_version;
	struct bci_manifest_boot *boots;
	size_t boot_count;
	int efi_boot_current;			/* -1: unknown */
	unsigned *efi_boot_order;
	size_t efi_boot_order_count;
	struct bci_manifest_efi_entry *efi_entries;
	size_t efi_entry_count;
	struct bci_manifest_file *files;	/* sorted by path once read or written */
	size_t file_count;
	struct bci_arena paths;		/* the files' paths (a run has 40k): freed with it */
};

/* An empty manifest of the current version (every string ""), or NULL on ENOMEM. */
struct bci_manifest *bci_manifest_new(void);
void bci_manifest_free(struct bci_manifest *m);

/* Replaces the string *@field (one of @m's char * members) with a copy of @value. */
int bci_manifest_set(char **field, const char *value);

/* Builders for the writer; each copies its arguments. */
int bci_manifest_add_boot(struct bci_manifest *m, const char *name, struct bci_manifest_boot **out);
int bci_manifest_boot_set(struct bci_manifest_boot *boot, const char *key, const char *value);
int bci_manifest_add_efi_entry(struct bci_manifest *m, unsigned number, const char *label,
			       bool active, const char *device_path);
int bci_manifest_add_boot_order(struct bci_manifest *m, unsigned number);
int bci_manifest_add_file(struct bci_manifest *m, const char *path, uint64_t size,
			  const char *sha256_hex, char *err, size_t err_size);

/*
 * Adds every regular file under the run folder @dir (recursively, relative
 * paths; a top-level manifest.json excepted) with its size and sha256. Any
 * other kind of entry (symlink, device, FIFO, socket) is an error naming it:
 * a run folder holds only files and folders.
 */
int bci_manifest_add_tree(struct bci_manifest *m, const char *dir, char *err, size_t err_size);

/*
 * Checks what the reader checks (words, paths, duplicates, numbers), then
 * writes @m as JSON to @out (indented, files sorted by path).
 */
int bci_manifest_write(struct bci_manifest *m, FILE *out, char *err, size_t err_size);

/* Reads and validates @len bytes of JSON; *@out is the caller's on success. */
int bci_manifest_parse(const char *text, size_t len, struct bci_manifest **out, char *err,
		       size_t err_size);

/* The entry for @path, or NULL (binary search: @m must come from parse or write). */
const struct bci_manifest_file *bci_manifest_find(const struct bci_manifest *m, const char *path);

/*
 * Whether @path is a safe relative path as the format defines it (the rule
 * the run archive's reader applies to its entries too); when not, @err says
 * why, without repeating the path ("a '..' component").
 */
bool bci_manifest_path_ok(const char *path, char *err, size_t err_size);
/* Whether @word is a run id / machine name: [A-Za-z0-9._-]{1,128}, not "." or "..". */
bool bci_manifest_word_ok(const char *word);

#endif

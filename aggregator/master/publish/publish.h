/* SPDX-License-Identifier: MIT */
/*
 * Publishing a build on the master: bootci-builder's test-image output
 * (vmlinuz, initrd.img, boot.ipxe, its --manifest file) and the testlists
 * beside it (fast.testlist, full.testlist) are verified against the
 * manifest's digests, kept content-addressed in DATA/builds/objects/<sha256>
 * (temporary, fsync, rename: a file is there whole or not at all), and
 * registered in the store's builds and build_files tables; then the fast
 * tier is queued when the lab has an inventory (DATA/machines.conf).
 *
 * The builder's manifest ("SHA256 SIZE MODE PATH ORIGIN" per line, '#'
 * comments; builder/image/outputs.c writes it): only its output lines (PATH without
 * "initrd.img:") are read; each must be well formed.
 */
#ifndef BCI_PUBLISH_H
#define BCI_PUBLISH_H

#include "manifest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bci_store;

struct bci_publish_entry {
	char path[256];
	char sha256[BCI_SHA256_HEX_LEN + 1];
	uint64_t size;
};

/*
 * Calls @fn for each output line of a builder manifest (@text, @len bytes);
 * stops at the first malformed line: -EINVAL with "@origin:LINE: ..." in @err.
 */
int bci_publish_manifest_parse(const char *origin, const char *text, size_t len,
			       int (*fn)(const struct bci_publish_entry *entry, void *ctx), void *ctx,
			       char *err, size_t err_size);

struct bci_publish {
	const char *build, *tree, *commit, *tier;	/* required */
	const char *base, *series_title, *message_id;	/* NULL: none */
	const char *image_dir;
	const char *manifest;		/* the builder's --manifest file; NULL: IMAGE_DIR/manifest */
	FILE *log;			/* progress lines; NULL: none */
	bool no_queue;			/* registered only: its caller queues its jobs (a bisect step) */
};

/*
 * Publishes @p into @data_dir and @store (and queues its fast tier when
 * @data_dir has an inventory). 0, or -errno with @err naming the file at
 * fault; nothing is registered unless every file verified.
 */
int bci_publish_dir(struct bci_store *store, const char *data_dir, const struct bci_publish *p,
		    char *err, size_t err_size);

/*
 * The known-good disk image (bootci-builder's disk.img, known-good.efi,
 * layout, register-boot-entry.sh and its manifest) as version @version:
 * verified and kept like a build, registered in the store's known_good
 * tables, served at /api/v1/known-good/<version>/files/<file>.
 */
int bci_publish_known_good(struct bci_store *store, const char *data_dir, const char *version,
			   const char *image_dir, const char *manifest, FILE *log, char *err,
			   size_t err_size);

/*
 * The same from another host: each file PUT to @master (http(s)://host:port)
 * with @token (a publisher's), then the build's metadata; serve runs
 * bci_publish_dir() on what arrived. 0, or -errno with the server's answer.
 */
int bci_publish_remote(const char *master, const char *token, const struct bci_publish *p,
		       char *err, size_t err_size);

/*
 * The known-good image from another host: its manifest and files PUT to
 * @master one each, then PUT /api/v1/known-good/@version; serve runs
 * bci_publish_known_good() on what arrived. 0, or -errno with the answer.
 */
int bci_publish_known_good_remote(const char *master, const char *token, const char *version,
				  const char *image_dir, const char *manifest, FILE *log, char *err,
				  size_t err_size);

#endif

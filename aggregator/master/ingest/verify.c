// SPDX-License-Identifier: MIT
/*
 * Ingest's manifest checks (ingest_internal.h): every file of the run is
 * listed in its manifest with the same size and sha256, and every listed file
 * is there; a lying archive is refused before any row is written.
 */
#include "internal.h"

#include "fsutil.h"
#include "message.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the manifest and what it promises ---- */

int bci_ingest_manifest_read(struct ingest *in)
{
	const struct bci_results_mem_file *file = bci_ingest_run_file_find(in, BCI_MANIFEST_NAME);
	char message[512];
	int ret;

	if (!file)
		return 0;
	/* Parsed where the scan keeps it, then let go: a 40k-file run's manifest is megabytes. */
	ret = bci_manifest_parse(file->data, file->len, &in->manifest, message, sizeof(message));
	bci_ingest_run_file_drop(in, BCI_MANIFEST_NAME);
	if (ret < 0)
		bci_message(in->err, in->err_size, "%s: manifest.json: %s", in->archive, message);
	return ret;
}

/* Every file found is listed, so the difference is listed files that are missing: names one. */
static int manifest_missing(struct ingest *in)
{
	for (size_t i = 0; i < in->manifest->file_count; i++) {
		if (!bci_ingest_entry_find(in, in->manifest->files[i].path)) {
			bci_message(in->err, in->err_size,
				    "%s: %s is in the manifest but not in the archive", in->archive,
				    in->manifest->files[i].path);
			break;
		}
	}
	return -EBADMSG;
}

/*
 * Every file the manifest lists is there with its size and sha256, and no
 * other, from the list of files the scan hashed as it read them. Only
 * regular files were listed (anything else refused the archive), and a
 * second entry of the same path was refused too, so every listed file is
 * there once.
 */
int bci_ingest_manifest_verify_unpacked(struct ingest *in)
{
	size_t root_len = strlen(in->root), files = 0, next = 0;

	for (size_t i = 0; i < in->unpacked.count; i++) {
		const struct bci_cache_file *got = &in->unpacked.files[i];
		const struct bci_manifest_file *file;
		const char *rel = got->path;

		/* root_find(): with a root folder, it is the archive's only top entry. */
		if (root_len) {
			if (strncmp(rel, in->root, root_len) || rel[root_len] != '/')
				continue;
			rel += root_len + 1;
		}
		if (!strcmp(rel, BCI_MANIFEST_NAME))
			continue;
		files++;
		/* Both lists are usually in the same order: the entry after the last one found first. */
		file = next < in->manifest->file_count && !strcmp(in->manifest->files[next].path, rel) ?
		       &in->manifest->files[next] : bci_manifest_find(in->manifest, rel);
		if (file)
			next = (size_t)(file - in->manifest->files) + 1;
		if (!file) {
			bci_message(in->err, in->err_size, "%s: %s is not in the manifest", in->archive,
				    rel);
			return -EBADMSG;
		}
		if (got->size != file->size || strcmp(got->sha256, file->sha256)) {
			bci_message(in->err, in->err_size,
				    "%s: %s does not match the manifest (%llu bytes, sha256 %s; the"
				    " manifest says %llu bytes, %s)", in->archive, rel,
				    (unsigned long long)got->size, got->sha256,
				    (unsigned long long)file->size, file->sha256);
			return -EBADMSG;
		}
	}
	if (files != in->manifest->file_count)
		return manifest_missing(in);
	return 0;
}

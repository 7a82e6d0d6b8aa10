// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the manifest reader: any input is parsed; an accepted
 * manifest must hold what the reader promises (safe sorted unique paths,
 * words for the run and machine) and must write out and read back equal.
 */
#include "manifest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_promises(const struct bci_manifest *m)
{
	char err[256];

	if (!bci_manifest_word_ok(m->run_id) || !bci_manifest_word_ok(m->machine))
		abort();
	for (size_t i = 0; i < m->file_count; i++) {
		if (!bci_manifest_path_ok(m->files[i].path, err, sizeof(err)))
			abort();
		if (i > 0 && strcmp(m->files[i - 1].path, m->files[i].path) >= 0)
			abort();
		if (bci_manifest_find(m, m->files[i].path) != &m->files[i])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_manifest *m, *back;
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *f;

	if (bci_manifest_parse((const char *)data, size, &m, err, sizeof(err)) < 0)
		return 0;
	check_promises(m);
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	if (bci_manifest_write(m, f, err, sizeof(err)) < 0)
		abort();
	fclose(f);
	if (bci_manifest_parse(text, len, &back, err, sizeof(err)) < 0)
		abort();
	if (back->file_count != m->file_count || strcmp(back->run_id, m->run_id) ||
	    back->boot_count != m->boot_count || back->efi_entry_count != m->efi_entry_count)
		abort();
	for (size_t i = 0; i < m->file_count; i++)
		if (strcmp(back->files[i].path, m->files[i].path) ||
		    back->files[i].size != m->files[i].size ||
		    strcmp(back->files[i].sha256, m->files[i].sha256))
			abort();
	bci_manifest_free(back);
	bci_manifest_free(m);
	free(text);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The gen_init_cpio spec parser and finalize() on arbitrary bytes. Variable
 * lookups are answered from a fixed table so a run never depends on the
 * environment; no file is opened, since sources are only read by the writer.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cpio_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fuzz_env(const char *name, void *unused)
{
	(void)unused;
	if (!strcmp(name, "A"))
		return "/a";
	if (!strcmp(name, "EMPTY"))
		return "";
	return NULL;
}

/* What finalize() promises: sorted, unique, every parent an earlier directory. */
static void fuzz_check_finalized(const struct builder_spec *spec)
{
	for (size_t i = 0; i < spec->count; i++) {
		const char *path = spec->entries[i].path;
		const char *slash = strrchr(path, '/');
		bool found = !slash;

		if (i && strcmp(spec->entries[i - 1].path, path) >= 0)
			__builtin_trap();
		for (size_t j = i; slash && j-- > 0 && !found;) {
			const struct builder_entry *e = &spec->entries[j];

			found = strlen(e->path) == (size_t)(slash - path) &&
				!strncmp(e->path, path, (size_t)(slash - path)) &&
				e->type == BUILDER_ENTRY_DIR;
		}
		if (!found)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct builder_spec *spec = builder_spec_new();
	char err[1024];
	/* Split the input in two specs so duplicates across files are exercised too. */
	size_t half = size / 2;

	if (!spec)
		return 0;
	builder_spec_set_env_lookup(spec, fuzz_env, NULL);
	if (builder_spec_parse(spec, "one.spec", (const char *)data, half, err, sizeof(err)) == 0)
		builder_spec_parse(spec, "two.spec", (const char *)data + half, size - half, err, sizeof(err));
	if (builder_spec_finalize(spec, err, sizeof(err)) == 0)
		fuzz_check_finalized(spec);
	builder_spec_free(spec);
	return 0;
}

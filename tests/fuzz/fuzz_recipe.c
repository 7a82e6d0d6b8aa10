// SPDX-License-Identifier: MIT
/*
 * The image recipe parser on arbitrary bytes. ${VAR} is answered from a fixed
 * table so a run never depends on the environment; nothing is opened.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fuzz_env(const char *name, void *unused)
{
	(void)unused;
	return !strcmp(name, "A") ? "/a" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	struct builder_recipe *r = builder_recipe_new();

	if (!r)
		return 0;
	if (builder_recipe_parse(r, "fuzz.conf", (const char *)data, size, "/base", fuzz_env, NULL,
				 err, sizeof(err)) == 0) {
		/* What a successful parse promises the builder. */
		if (r->kind == BUILDER_IMAGE_UNSET)
			__builtin_trap();
		for (size_t i = 0; i < r->program_count; i++)
			if (r->programs[i].image_path[0] != '/' || r->programs[i].source[0] != '/')
				__builtin_trap();
		for (size_t i = 0; i < r->specs.count; i++)
			if (r->specs.items[i][0] != '/')
				__builtin_trap();
	}
	builder_recipe_free(r);
	return 0;
}

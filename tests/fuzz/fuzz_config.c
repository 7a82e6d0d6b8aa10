// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the configuration parsers with the executor's real key
 * table: the input is read as an executor.conf file and as a kernel command
 * line. Any accepted value must then be readable through the typed getters.
 */
#include "config.h"
#include "executor_keys.h"
#include "executor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_back(struct bci_config *config)
{
	for (const struct bci_config_key *k = bci_executor_keys; k->name; k++) {
		const char **items;
		char *storage;
		size_t count;

		if (!bci_config_get(config, k->name))
			abort();
		if (k->type == BCI_CONFIG_SECONDS && bci_config_get_seconds(config, k->name) == 0)
			abort();
		if (k->type == BCI_CONFIG_LIST &&
		    bci_config_get_list(config, k->name, &storage, &items, &count) == 0) {
			for (size_t i = 0; i < count; i++)
				if (items[i][0] == '\0' || strchr(items[i], ','))
					abort();
			free(items);
			free(storage);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_config *config;
	char err[512], *cmdline;

	if (bci_config_new(bci_executor_keys, &config) < 0)
		return 0;
	bci_config_parse_file(config, "fuzz.conf", (const char *)data, size, err, sizeof(err));
	read_back(config);

	cmdline = strndup((const char *)data, size);
	if (cmdline) {
		bci_config_parse_cmdline(config, cmdline, "bootci.", err, sizeof(err));
		read_back(config);
	}
	bci_config_free(config);

	/* The whole load (file, command line, checks across keys) as the builder does it. */
	if (cmdline) {
		/* Accepted or not, what was set is readable. */
		bci_executor_config_load("fuzz.conf", (const char *)data, size, cmdline, &config, err,
					 sizeof(err));
		if (config)
			read_back(config);
		bci_config_free(config);
	}
	free(cmdline);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Fuzz target for what the master reads from Patchwork and its own
 * patchwork.conf (aggregator/master/patchwork/parse.c, config.c). The first
 * byte picks the reader: 's' a series listing page, 'c' a check list, 'p' a
 * project, 'l' a Link header, 'd' a date, anything else patchwork.conf. A
 * series read is whole: a positive id, its patches' ids positive, when it
 * was complete -1 or a time since 1970; a date read is one since 1970.
 */
#include "../../aggregator/master/patchwork/patchwork.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], next[128], *text;
	int ret;

	if (!size)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0]) {
	case 's': {
		struct bci_patchwork_series *series = NULL;
		size_t count = 0;

		ret = bci_patchwork_series_parse(text, size - 1, &series, &count, err, sizeof(err));
		for (size_t i = 0; i < count; i++) {
			if (series[i].id <= 0 || !(series[i].complete == -1 || series[i].complete >= 0))
				abort();
			for (size_t j = 0; j < series[i].patch_count; j++)
				if (series[i].patches[j] <= 0)
					abort();
		}
		bci_patchwork_series_free_all(series, count);
		break;
	}
	case 'c':
		ret = bci_patchwork_checks_has(text, size - 1, "bootci-fast", "pending", err,
					       sizeof(err));
		if (ret > 1)
			abort();
		break;
	case 'p': {
		int64_t *ids = NULL;
		size_t count = 0;

		ret = bci_patchwork_project_maintainers(text, size - 1, &ids, &count, err,
							sizeof(err));
		if (ret < 0 && (ids || count))
			abort();
		free(ids);
		break;
	}
	case 'd': {
		double when = -2;

		ret = bci_patchwork_date_parse(text, &when);
		if (ret == 0 && !(when >= 0))
			abort();
		if (ret < 0 && when != -2)
			abort();
		break;
	}
	case 'l':
		ret = bci_patchwork_link_next(text, next, sizeof(next));
		if (ret == 1 && (!next[0] || strlen(next) >= sizeof(next)))
			abort();
		if (ret != 1 && next[0])
			abort();
		break;
	default: {
		struct bci_patchwork_config *config = NULL;

		ret = bci_patchwork_config_parse("patchwork.conf", text, size - 1, &config, err,
						 sizeof(err));
		if (ret == 0) {
			for (size_t i = 0; i < config->project_count; i++)
				if (!config->projects[i].url || !config->projects[i].token_file ||
				    !config->projects[i].linkname || !config->projects[i].tree ||
				    !config->projects[i].branch ||
				    (config->projects[i].build_command && !config->projects[i].base))
					abort();
		} else if (config) {
			abort();
		}
		bci_patchwork_config_free(config);
		break;
	}
	}
	free(text);
	return 0;
}

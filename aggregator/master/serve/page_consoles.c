// SPDX-License-Identifier: MIT
/* The consoles the machine and run pages link (page_consoles.h). */
#include "page_consoles.h"
#include "console.h"
#include "console_log.h"
#include "../report/machine_pages.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(((struct bci_page_console *)0)->run_id) == BCI_CONSOLE_RUN_MAX + 1,
	       "a console's run id as console_log.h reads it");

int serve_page_consoles(const char *data_dir, const char *machine, const char *run_id,
			struct bci_page_console **out, size_t *count, char *err, size_t err_size)
{
	size_t scan = run_id ? BCI_PAGE_CONSOLES_SCANNED : BCI_PAGE_CONSOLES_LISTED, n = 0, kept;
	struct bci_console_boot *boots = NULL;
	struct bci_page_console *list;
	char dir[PATH_MAX];
	int ret;

	*out = NULL;
	*count = 0;
	ret = bci_consoles_dir(data_dir, machine, dir, sizeof(dir));
	if (ret >= 0)
		ret = bci_console_log_list(dir, &boots, &kept);
	if (ret < 0) {
		snprintf(err, err_size, "the consoles of %s: %s", machine, strerror(-ret));
		return ret;
	}
	if (kept < scan)
		scan = kept;
	list = scan ? calloc(scan, sizeof(*list)) : NULL;
	if (scan && !list) {
		free(boots);
		return -ENOMEM;
	}
	for (size_t i = 0; i < scan; i++) {
		const struct bci_console_boot *boot = &boots[kept - 1 - i];
		struct bci_page_console *c = &list[n];
		int fd = bci_console_log_open_boot(dir, boot->number);

		/* A boot's file that went away meanwhile (pruned) is not listed. */
		if (fd < 0)
			continue;
		if (bci_console_log_run_boot(fd, c->run_id, &c->run_boot) != 1)
			c->run_id[0] = '\0';
		close(fd);
		if (run_id && strcmp(c->run_id, run_id))
			continue;
		c->number = boot->number;
		c->size = boot->size;
		c->modified = (double)boot->modified;
		n++;
	}
	free(boots);
	if (!n) {
		free(list);
		list = NULL;
	}
	*out = list;
	*count = n;
	return 0;
}

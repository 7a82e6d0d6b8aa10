// SPDX-License-Identifier: MIT
/* The machine and run pages on serve's side (page_machine.h). */
#include "page_machine.h"
#include "console.h"
#include "console_log.h"
#include "../report/machine_pages.h"
#include "../schedule/deploy.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
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

int serve_machine_page(struct bci_store *store, const char *data_dir, const char *machine,
		       const char *run_id, const char *page, bool json, struct bci_str *body,
		       char *err, size_t err_size)
{
	bool machine_page = !run_id;
	struct bci_page_console *consoles = NULL;
	unsigned long number = 1;
	size_t count = 0;
	int ret;

	if (machine_page && page) {
		char *end;

		number = strtoul(page, &end, 10);
		if (*page < '0' || *page > '9' || *end || number < 1 || number > 1000000) {
			snprintf(err, err_size, "page '%.40s': a number from 1", page);
			return -EINVAL;
		}
	}
	ret = serve_page_consoles(data_dir, machine, run_id, &consoles, &count, err, err_size);
	if (ret < 0)
		return ret;
	if (machine_page) {
		struct bci_machine_page p = { .data_dir = data_dir, .machine = machine,
					      .page = (unsigned)number,
					      .consoles = consoles, .n_consoles = count,
					      .json = json };
		/* The re-deploy mark, read by its one reader (which uses only the data folder). */
		struct bci_schedule schedule = { .store = store, .data_dir = data_dir };
		char note[512];

		ret = bci_schedule_deploy_state(&schedule, machine, note, sizeof(note), err, err_size);
		if (ret == BCI_DEPLOY_DAMAGED || ret == BCI_DEPLOY_DEPLOYING) {
			p.deploy = ret == BCI_DEPLOY_DAMAGED ? "damaged" : "deploying";
			p.deploy_note = note;
		}
		if (ret >= 0)
			ret = bci_pages_machine(store, &p, body, err, err_size);
	} else {
		struct bci_run_page p = { .data_dir = data_dir, .machine = machine, .run_id = run_id,
					  .consoles = consoles, .n_consoles = count, .json = json };

		ret = bci_pages_run(store, &p, body, err, err_size);
	}
	free(consoles);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * A machine's page and a run's page as serve renders them
 * (report/machine_pages.h), with what serve adds from the data folder: the
 * consoles it keeps (console_log.h: a machine's latest boots, or the boots
 * whose run note names a run) and the machine's re-deploy mark
 * (schedule/deploy.h).
 */
#ifndef BCI_SERVE_PAGE_MACHINE_H
#define BCI_SERVE_PAGE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>

struct bci_page_console;
struct bci_store;
struct bci_str;

/*
 * The page of @machine (@run_id NULL), or of its run @run_id, as HTML or
 * (@json) JSON, appended to @body; @page the query's ?page= (NULL: 1). 0,
 * -EINVAL a bad ?page= (a 400), -ENOENT nothing such (a 404), -errno; @err
 * says why.
 */
int serve_machine_page(struct bci_store *store, const char *data_dir, const char *machine,
		       const char *run_id, const char *page, bool json, struct bci_str *body,
		       char *err, size_t err_size);

/* How many of a machine's latest consoles its page lists. */
#define BCI_PAGE_CONSOLES_LISTED 20
/* How many of a machine's latest consoles are read for a run's. */
#define BCI_PAGE_CONSOLES_SCANNED 100

/*
 * The consoles of @machine (@run_id NULL: its latest
 * BCI_PAGE_CONSOLES_LISTED) or of its run @run_id (among its latest
 * BCI_PAGE_CONSOLES_SCANNED), newest first, in *@out (malloc'ed, the caller
 * frees it; NULL when none). 0 or -errno with @err saying why.
 */
int serve_page_consoles(const char *data_dir, const char *machine, const char *run_id,
			struct bci_page_console **out, size_t *count, char *err, size_t err_size);

#endif

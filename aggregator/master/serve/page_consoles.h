/* SPDX-License-Identifier: MIT */
/*
 * The consoles a machine's or a run's page links (report/machine_pages.h),
 * found in the data folder as the console routes serve them
 * (console_log.h): a machine's latest boots, or the boots whose run note
 * names a run.
 */
#ifndef BCI_SERVE_PAGE_CONSOLES_H
#define BCI_SERVE_PAGE_CONSOLES_H

#include <stddef.h>

struct bci_page_console;

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

/* SPDX-License-Identifier: MIT */
/*
 * A machine's page and a run's page (machine_pages.c), each as HTML or as
 * JSON, from what the store holds: the scheduler's state of the machine and
 * its jobs (how often each was handed out, why it ended), its runs, each
 * run's boots, crash records and results, and its archive.
 *
 * The consoles are not in the store: serve reads them from the data folder
 * (serve/console_log.h) and hands the renderer what it found, so the pages
 * link each console to its machine or run.
 *
 * Both return 0 with the page appended to @b, -ENOENT (with @err saying
 * what is unknown), or -errno. Every name goes through the HTML or JSON
 * escaper; the output depends only on the store and the inputs (no clock).
 */
#ifndef BCI_MACHINE_PAGES_H
#define BCI_MACHINE_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bci_store;
struct bci_str;

/* A machine's console of one boot as serve keeps it (GET /machines/M/consoles/N). */
struct bci_page_console {
	unsigned number;
	uint64_t size;
	double modified;		/* its last byte's time */
	char run_id[129];		/* the run it netbooted ("": a known-good boot or unknown) */
	unsigned run_boot;		/* the run's boot it was, as the executor said (0: unknown) */
};

/* The runs a machine page lists per page, newest first. */
#define BCI_MACHINE_PAGE_RUNS 50
/* The scheduler's jobs a machine page lists, newest first. */
#define BCI_MACHINE_PAGE_JOBS 20

/* The machines, by name, with their state and last upload: a table for the front page. */
int bci_pages_machines_list(struct bci_store *store, struct bci_str *b, char *err, size_t err_size);

struct bci_machine_page {
	const char *data_dir;		/* its refused uploads are read there (store/refused.h) */
	const char *machine;
	unsigned page;			/* of its runs, from 1 (0: 1) */
	const struct bci_page_console *consoles;	/* newest first */
	size_t n_consoles;
	/* Its disk's re-deploy (schedule/deploy.h): "damaged", "deploying", or NULL: none. */
	const char *deploy;
	const char *deploy_note;	/* the reason, or the version being written */
	bool json;
};

int bci_pages_machine(struct bci_store *store, const struct bci_machine_page *page,
		      struct bci_str *b, char *err, size_t err_size);

struct bci_run_page {
	const char *data_dir;		/* its archive and crash records are read there */
	const char *machine;
	const char *run_id;
	const struct bci_page_console *consoles;	/* the consoles of its boots, newest first */
	size_t n_consoles;
	bool json;
};

int bci_pages_run(struct bci_store *store, const struct bci_run_page *page, struct bci_str *b,
		  char *err, size_t err_size);

#endif

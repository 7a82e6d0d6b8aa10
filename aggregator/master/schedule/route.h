/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's paths inside serve (serve_hook.h lists them), parsed
 * without touching anything else: route.c reads only the path.
 */
#ifndef BCI_SCHEDULE_ROUTE_H
#define BCI_SCHEDULE_ROUTE_H

#include "manifest.h"

#include <stdbool.h>

/* True for the scheduler's paths (serve_hook.h); the rest is serve's own. */
bool bci_schedule_http_owns(const char *url);

enum bci_schedule_route_kind {
	BCI_SCHEDULE_ROUTE_BOOT,	/* first: the MAC as written */
	BCI_SCHEDULE_ROUTE_BUILD,	/* first: the build */
	BCI_SCHEDULE_ROUTE_BUILD_FILE,	/* first: the build, second: the file */
	BCI_SCHEDULE_ROUTE_JOB_INITRD,	/* first: the machine, second: the run id */
	BCI_SCHEDULE_ROUTE_DEPLOY_INITRD, /* first: the machine, second: the known-good version */
	BCI_SCHEDULE_ROUTE_STATES,
	BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE,	/* first: the version, second: the file */
	BCI_SCHEDULE_ROUTE_KNOWN_GOOD,	/* first: the version (PUT only) */
};

struct bci_schedule_route {
	enum bci_schedule_route_kind kind;
	char first[BCI_MANIFEST_WORD_MAX + 1];
	char second[BCI_MANIFEST_WORD_MAX + 1];
};

/* Parses one of those paths (decoded); 0, or -1 for any other path (a 404). */
int bci_schedule_route_parse(const char *url, struct bci_schedule_route *route);

#endif

// SPDX-License-Identifier: MIT
/* The scheduler's paths (route.h), each name checked as its kind (names.h). */
#include "route.h"

#include "../names.h"

#include <string.h>

#define BOOT_PREFIX "/api/v1/boot/"
#define BUILDS_PREFIX "/api/v1/builds/"
#define MACHINES_PREFIX "/api/v1/machines/"
#define STATES_PATH "/api/v1/schedule/machines"
#define KNOWN_GOOD_PREFIX "/api/v1/known-good/"

/*
 * Copies the segment before the next '/' (or the end) into @word when it is
 * a name @ok takes (names.h); the rest of @p, or NULL.
 */
static const char *word_take(const char *p, char *word, size_t size, bool (*ok)(const char *))
{
	size_t n = strcspn(p, "/");

	if (n == 0 || n >= size)
		return NULL;
	memcpy(word, p, n);
	word[n] = '\0';
	return ok(word) ? p + n : NULL;
}

bool bci_schedule_http_owns(const char *url)
{
	const char *slash;

	if (!strncmp(url, BOOT_PREFIX, strlen(BOOT_PREFIX)) ||
	    !strncmp(url, BUILDS_PREFIX, strlen(BUILDS_PREFIX)) || !strcmp(url, STATES_PATH) ||
	    !strncmp(url, KNOWN_GOOD_PREFIX, strlen(KNOWN_GOOD_PREFIX)))
		return true;
	if (strncmp(url, MACHINES_PREFIX, strlen(MACHINES_PREFIX)))
		return false;
	slash = strchr(url + strlen(MACHINES_PREFIX), '/');
	return slash && (!strncmp(slash, "/jobs/", 6) || !strncmp(slash, "/deploy/", 8));
}

int bci_schedule_route_parse(const char *url, struct bci_schedule_route *route)
{
	const char *p;

	memset(route, 0, sizeof(*route));
	if (!strcmp(url, STATES_PATH)) {
		route->kind = BCI_SCHEDULE_ROUTE_STATES;
		return 0;
	}
	if (!strncmp(url, BOOT_PREFIX, strlen(BOOT_PREFIX))) {
		p = url + strlen(BOOT_PREFIX);
		/* Any spelling bci_inventory_by_mac() reads; the inventory decides if it is known. */
		if (strlen(p) >= sizeof(route->first) || strchr(p, '/') || !*p)
			return -1;
		strcpy(route->first, p);
		route->kind = BCI_SCHEDULE_ROUTE_BOOT;
		return 0;
	}
	if (!strncmp(url, BUILDS_PREFIX, strlen(BUILDS_PREFIX))) {
		p = word_take(url + strlen(BUILDS_PREFIX), route->first, sizeof(route->first),
			      bci_name_published_build_ok);
		if (!p)
			return -1;
		if (!*p) {
			route->kind = BCI_SCHEDULE_ROUTE_BUILD;
			return 0;
		}
		if (strncmp(p, "/files/", 7) ||
		    !(p = word_take(p + 7, route->second, sizeof(route->second),
				    bci_name_build_file_ok)) || *p)
			return -1;
		route->kind = BCI_SCHEDULE_ROUTE_BUILD_FILE;
		return 0;
	}
	if (!strncmp(url, KNOWN_GOOD_PREFIX, strlen(KNOWN_GOOD_PREFIX))) {
		p = word_take(url + strlen(KNOWN_GOOD_PREFIX), route->first, sizeof(route->first),
			      bci_name_known_good_ok);
		if (p && !*p) {
			route->kind = BCI_SCHEDULE_ROUTE_KNOWN_GOOD;
			return 0;
		}
		if (!p || strncmp(p, "/files/", 7) ||
		    !(p = word_take(p + 7, route->second, sizeof(route->second),
				    bci_name_build_file_ok)) || *p)
			return -1;
		route->kind = BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE;
		return 0;
	}
	if (!strncmp(url, MACHINES_PREFIX, strlen(MACHINES_PREFIX))) {
		p = word_take(url + strlen(MACHINES_PREFIX), route->first, sizeof(route->first),
			      bci_name_machine_ok);
		/* A re-deploy's initrd: /api/v1/machines/<name>/deploy/<known-good version>/initrd */
		if (p && !strncmp(p, "/deploy/", 8)) {
			if (!(p = word_take(p + 8, route->second, sizeof(route->second),
					    bci_name_known_good_ok)) ||
			    strcmp(p, "/initrd"))
				return -1;
			route->kind = BCI_SCHEDULE_ROUTE_DEPLOY_INITRD;
			return 0;
		}
		if (!p || strncmp(p, "/jobs/", 6) ||
		    !(p = word_take(p + 6, route->second, sizeof(route->second), bci_name_run_id_ok)) ||
		    strcmp(p, "/initrd"))
			return -1;
		route->kind = BCI_SCHEDULE_ROUTE_JOB_INITRD;
		return 0;
	}
	return -1;
}

// SPDX-License-Identifier: MIT
/*
 * The inventory's tags on the store's machines (schedule.h): the matrix and
 * the report group machines by the store's tags, and the inventory is where
 * a lab says what a machine is. Tags a person gave with `machine tag` are not
 * the inventory's to take away: only a tag the inventory read before gave a
 * machine, and no longer does, is removed.
 */
#include "internal.h"

#include "../store/store.h"

#include <stdbool.h>
#include <string.h>

static bool has_tag(char *const *tags, const char *tag)
{
	for (size_t i = 0; tags && tags[i]; i++)
		if (!strcmp(tags[i], tag))
			return true;
	return false;
}

int bci_schedule_tags_sync(struct bci_schedule *s, const struct bci_inventory *before, char *err,
			   size_t err_size)
{
	const struct bci_inventory *now = s->inventory;
	int ret;

	for (size_t i = 0; i < now->machine_count; i++) {
		const struct bci_inventory_machine *m = &now->machines[i];

		if ((ret = bci_store_machine_ensure(s->store, m->name, NULL, err, err_size)) < 0)
			return ret;
		for (size_t t = 0; m->tags && m->tags[t]; t++)
			if ((ret = bci_store_machine_tag(s->store, m->name, m->tags[t], err,
							 err_size)) < 0)
				return ret;
	}
	for (size_t i = 0; before && i < before->machine_count; i++) {
		const struct bci_inventory_machine *old = &before->machines[i];
		const struct bci_inventory_machine *m = bci_inventory_by_name(now, old->name);

		for (size_t t = 0; old->tags && old->tags[t]; t++) {
			if (m && has_tag(m->tags, old->tags[t]))
				continue;
			if ((ret = bci_store_machine_untag(s->store, old->name, old->tags[t], err,
							   err_size)) < 0)
				return ret;
			bci_schedule_say(s, "%s: tag %s no longer in the inventory: removed",
					 old->name, old->tags[t]);
		}
	}
	return 0;
}

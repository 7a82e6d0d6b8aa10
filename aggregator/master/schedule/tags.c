// SPDX-License-Identifier: MIT
/*
 * The inventory's tags and shard groups on the store's machines
 * (schedule.h): the matrix and the report group machines by the store's
 * tags, the report reads a test's baseline on the machines of the store's
 * shard group, and the inventory is where a lab says what a machine is.
 * Tags and groups a person gave with `machine tag` or `machine group` are
 * not the inventory's to take away: only what the inventory read before
 * gave a machine, and no longer does, is removed.
 */
#include "internal.h"

#include "../store/store.h"
#include "manifest.h"

#include <errno.h>
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
	char group[BCI_MANIFEST_WORD_MAX + 1];
	int ret;

	for (size_t i = 0; i < now->machine_count; i++) {
		const struct bci_inventory_machine *m = &now->machines[i];

		if ((ret = bci_store_machine_ensure(s->store, m->name, NULL, err, err_size)) < 0)
			return ret;
		for (size_t t = 0; m->tags && m->tags[t]; t++)
			if ((ret = bci_store_machine_tag(s->store, m->name, m->tags[t], err,
							 err_size)) < 0)
				return ret;
		if (m->shard_group &&
		    (ret = bci_store_machine_group_set(s->store, m->name, m->shard_group, err,
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
		if (!old->shard_group || (m && m->shard_group))
			continue;
		/* Only the group it gave: not one a person has put the machine in since. */
		ret = bci_store_machine_group(s->store, old->name, group, sizeof(group), err,
					      err_size);
		if (ret < 0 && ret != -ENAMETOOLONG)
			return ret;
		if (ret <= 0 || strcmp(group, old->shard_group))
			continue;
		if ((ret = bci_store_machine_group_set(s->store, old->name, NULL, err, err_size)) < 0)
			return ret;
		bci_schedule_say(s, "%s: shard group %s no longer in the inventory: removed",
				 old->name, old->shard_group);
	}
	return 0;
}

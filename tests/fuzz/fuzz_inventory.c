// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the lab inventory (machines.conf): whatever is accepted
 * must hold only what the format allows (normalized MACs, unique names and
 * MACs, absolute power commands, each power driver with its own keys), and every machine must be found again by
 * its MAC and name.
 */
#include "../../aggregator/master/schedule/inventory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_inventory *inv;
	char err[256];

	if (bci_inventory_parse("fuzz", (const char *)data, size, &inv, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
		return 0;
	}
	for (size_t i = 0; i < inv->machine_count; i++) {
		const struct bci_inventory_machine *m = &inv->machines[i];
		char normal[18];

		if (bci_inventory_mac_normalize(m->mac, normal) < 0 || strcmp(normal, m->mac))
			abort();
		if (bci_inventory_by_mac(inv, m->mac) != m || bci_inventory_by_name(inv, m->name) != m)
			abort();
		if (m->power && (!m->power[0] || m->power[0][0] != '/'))
			abort();
		/* Each driver with its own keys only, the ipmi driver's all set. */
		if ((m->power_driver == BCI_POWER_DRIVER_COMMAND) != !!m->power)
			abort();
		if (m->power_driver != BCI_POWER_DRIVER_COMMAND &&
		    (m->power_on || m->power_off || m->power_status))
			abort();
		if ((m->power_driver == BCI_POWER_DRIVER_IPMI) !=
		    !!(m->ipmi.host && m->ipmi.user && m->ipmi.password_file && m->ipmi.port))
			abort();
		if (m->ipmi.host && (m->ipmi.host[0] == '-' || m->ipmi.password_file[0] != '/'))
			abort();
		if (!m->tags || m->deadline == 0)
			abort();
	}
	if (inv->power_cycles < 1)
		abort();
	bci_inventory_free(inv);
	return 0;
}

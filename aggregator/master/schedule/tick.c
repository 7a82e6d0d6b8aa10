// SPDX-License-Identifier: MIT
/* One turn of the master's loop (schedule.h): the gates, then recovery. */
#include "internal.h"

int bci_schedule_tick(struct bci_schedule *s, double now, char *err, size_t err_size)
{
	int ret = bci_schedule_gates(s, now, err, err_size);

	if (ret < 0)
		return ret;
	return bci_schedule_recover(s, now, err, err_size);
}

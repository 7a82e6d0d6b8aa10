// SPDX-License-Identifier: MIT
/*
 * The hardware watchdog: armed with the configured timeout before the first
 * job and petted from every turn of the monitor loop, so a kernel that hangs
 * (or never resumes) is reset and the run resumes on the next boot. Closed
 * with the magic 'V' only on an orderly end.
 */
#include "executor.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/watchdog.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int bci_watchdog_open(struct bci_executor *ex)
{
	unsigned long timeout = bci_config_get_seconds(ex->config, "watchdog_timeout");
	char path[PATH_MAX];
	int fd = -1, set;

	ex->watchdog_fd = -1;
	if (timeout == 0)
		return 0;
	for (int i = 0; i < 8 && fd < 0; i++) {
		if (bci_path(ex->root, path, "/dev/watchdog%d", i) < 0)
			return -ENAMETOOLONG;
		fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		bci_warn("no hardware watchdog (/dev/watchdog*): a hung kernel will not be reset");
		return -ENODEV;
	}
	set = (int)timeout;
	if (ioctl(fd, WDIOC_SETTIMEOUT, &set) < 0)
		bci_warn("watchdog: cannot set a %lu s timeout: %s", timeout, strerror(errno));
	else if ((unsigned long)set != timeout)
		bci_warn("watchdog: timeout %lu s refused, the device uses %d s", timeout, set);
	ex->watchdog_fd = fd;
	bci_say("watchdog armed (%s, %d s)", path + strlen(ex->root), set);
	return 0;
}

void bci_watchdog_pet(struct bci_executor *ex)
{
	if (ex->watchdog_fd >= 0 && ioctl(ex->watchdog_fd, WDIOC_KEEPALIVE, 0) < 0 &&
	    write(ex->watchdog_fd, "\0", 1) < 0)
		bci_warn("watchdog: keepalive failed: %s", strerror(errno));
}

void bci_watchdog_close(struct bci_executor *ex)
{
	if (ex->watchdog_fd < 0)
		return;
	/* The magic close: without it, closing leaves the watchdog running. */
	if (write(ex->watchdog_fd, "V", 1) != 1)
		bci_warn("watchdog: magic close failed: %s", strerror(errno));
	close(ex->watchdog_fd);
	ex->watchdog_fd = -1;
}

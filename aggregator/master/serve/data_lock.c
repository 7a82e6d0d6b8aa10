// SPDX-License-Identifier: MIT
/* One serve per data folder (data_lock.h). */
#include "data_lock.h"
#include "fsutil.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* The PID the holder wrote, or 0 when the file holds none yet. */
static long holder_pid(int fd)
{
	char text[24];
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	char *end;
	long pid;

	if (n <= 0)
		return 0;
	text[n] = '\0';
	pid = strtol(text, &end, 10);
	return end != text && *end == '\n' && pid > 0 ? pid : 0;
}

int bci_serve_data_lock(const char *data_dir, char *err, size_t err_size)
{
	char path[PATH_MAX], text[24];
	int fd, ret, len;
	long pid = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/" BCI_SERVE_LOCK_FILE, data_dir) >= sizeof(path)) {
		bci_message(err, err_size, "%s: path too long", data_dir);
		return -ENAMETOOLONG;
	}
	ret = bci_mkdir_p(data_dir, 0750);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", data_dir, strerror(-ret));
		return ret;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		if (ret == -EWOULDBLOCK) {
			/* The holder writes its PID just after it locks: give it a moment. */
			for (int i = 0; i < 20 && !(pid = holder_pid(fd)); i++)
				nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
			if (pid)
				bci_message(err, err_size,
					    "%s is in use by another serve (PID %ld, %s): one serve per"
					    " data folder", data_dir, pid, path);
			else
				bci_message(err, err_size,
					    "%s is in use by another serve (%s is locked): one serve"
					    " per data folder", data_dir, path);
			ret = -EBUSY;
		} else {
			bci_message(err, err_size, "%s: cannot lock: %s", path, strerror(errno));
		}
		close(fd);
		return ret;
	}
	len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)len, 0) != len) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

void bci_serve_data_unlock(int fd)
{
	if (fd < 0)
		return;
	/* A clean stop leaves no PID behind; failing to empty it is harmless: the lock decides. */
	if (ftruncate(fd, 0) < 0) {
	}
	close(fd);
}

// SPDX-License-Identifier: MIT
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bci_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

int bci_fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len;

	if (!slash)
		return bci_fsync_dir(".");
	len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len);
	dir[len] = '\0';
	return bci_fsync_dir(dir);
}

int bci_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	struct stat st;
	int ret;

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';

	char *slash = strrchr(buf, '/');
	if (slash && slash != buf) {
		*slash = '\0';
		ret = bci_mkdir_p(buf, mode);
		if (ret < 0)
			return ret;
		*slash = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return bci_fsync_parent(buf);
}

ssize_t bci_read_retry(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int bci_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int bci_atomic_open(const char *path, char *tmp, mode_t mode)
{
	int n = snprintf(tmp, PATH_MAX, "%s.tmp.XXXXXX", path);
	int fd;

	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0) {
		int ret = -errno;
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	return fd;
}

int bci_atomic_commit(int fd, const char *tmp, const char *path)
{
	if (fsync(fd) < 0) {
		int ret = -errno;
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	if (close(fd) < 0) {
		int ret = -errno;
		unlink(tmp);
		return ret;
	}
	if (rename(tmp, path) < 0) {
		int ret = -errno;
		unlink(tmp);
		return ret;
	}
	return bci_fsync_parent(path);
}

void bci_atomic_abort(int fd, const char *tmp)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
}

int bci_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	int fd = bci_atomic_open(path, tmp, mode);
	int ret;

	if (fd < 0)
		return fd;
	ret = bci_write_all(fd, data, len);
	if (ret < 0) {
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	return bci_atomic_commit(fd, tmp, path);
}

long long bci_cut_torn_line(int fd)
{
	struct stat st;
	off_t end, at;
	char block[4096];

	if (fstat(fd, &st) < 0)
		return -errno;
	end = at = st.st_size;
	while (at > 0) {
		size_t want = at < (off_t)sizeof(block) ? (size_t)at : sizeof(block);
		ssize_t n;

		do
			n = pread(fd, block, want, at - (off_t)want);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if ((size_t)n != want)
			return -EIO;
		for (size_t i = want; i > 0; i--)
			if (block[i - 1] == '\n') {
				at = at - (off_t)want + (off_t)i;
				goto found;
			}
		at -= (off_t)want;
	}
found:
	if (at == end)
		return 0;
	if (ftruncate(fd, at) < 0 || fsync(fd) < 0)
		return -errno;
	return (long long)(end - at);
}

int bci_read_file(const char *path, char **out, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, used = 0;
	char *buf;
	int ret;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		ret = -ENOMEM;
		goto out_fd;
	}
	for (;;) {
		if (used + 1 >= cap) {
			char *bigger;
			if (cap >= max + 1) {
				ret = -EFBIG;
				goto out_buf;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			bigger = realloc(buf, cap);
			if (!bigger) {
				ret = -ENOMEM;
				goto out_buf;
			}
			buf = bigger;
		}
		ssize_t n = read(fd, buf + used, cap - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out_buf;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	*out = buf;
	if (len)
		*len = used;
	close(fd);
	return 0;

out_buf:
	free(buf);
out_fd:
	close(fd);
	return ret;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

int bci_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int bci_copy_file(const char *from, const char *to, mode_t mode, int sync, const char **failed)
{
	char buf[65536];
	struct stat st;
	int in, out, ret = 0;

	*failed = from;
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	if (mode == BCI_COPY_KEEP_MODE) {
		if (fstat(in, &st) < 0) {
			ret = -errno;
			goto out_in;
		}
		mode = st.st_mode & 0777;
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0) {
		ret = -errno;
		*failed = to;
		goto out_in;
	}
	for (;;) {
		ssize_t n = bci_read_retry(in, buf, sizeof(buf));

		if (n <= 0) {
			ret = (int)n;
			break;
		}
		ret = bci_write_all(out, buf, (size_t)n);
		if (ret < 0) {
			*failed = to;
			break;
		}
	}
	if (ret == 0 && sync && fsync(out) < 0) {
		ret = -errno;
		*failed = to;
	}
	if (close(out) < 0 && ret == 0) {
		ret = -errno;
		*failed = to;
	}
out_in:
	close(in);
	return ret;
}

/*
 * The stream of bci_atomic_write_stream(): each full buffer written to the
 * temporary file, and the disk started on every WRITEBACK_CHUNK of it as the
 * writer goes, so that the disk works while the writer does and the commit's
 * fsync has less left to wait for (a large page, the report's matrix, is made
 * faster than a disk writes it).
 */
#define STREAM_BUFFER ((size_t)256 << 10)
#define WRITEBACK_CHUNK ((off_t)4 << 20)

struct writeback_stream {
	int fd;
	off_t written, started;		/* bytes written; of them, writeback started */
};

static ssize_t writeback_write(void *cookie, const char *buf, size_t size)
{
	struct writeback_stream *w = cookie;
	int ret = bci_write_all(w->fd, buf, size);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	w->written += (off_t)size;
	if (w->written - w->started >= WRITEBACK_CHUNK) {
		/* Only a head start: the commit's fsync is what makes it durable. */
		sync_file_range(w->fd, w->started, w->written - w->started,
				SYNC_FILE_RANGE_WRITE);
		w->started = w->written;
	}
	return (ssize_t)size;
}

int bci_atomic_write_stream(const char *path, mode_t mode, bci_stream_writer write,
			    const void *ctx, char *err, size_t err_size)
{
	static const cookie_io_functions_t io = { .write = writeback_write };
	struct writeback_stream stream;
	char tmp[PATH_MAX];
	FILE *out;
	int fd, ret;

	fd = bci_atomic_open(path, tmp, mode);
	if (fd < 0) {
		snprintf(err, err_size, "%s: cannot create: %s", path, strerror(-fd));
		return fd;
	}
	/* The stream writes through @fd and leaves it open for the commit's fsync. */
	stream = (struct writeback_stream){ .fd = fd };
	errno = 0;
	out = fopencookie(&stream, "w", io);
	if (!out || setvbuf(out, NULL, _IOFBF, STREAM_BUFFER) != 0) {
		ret = -(errno ? errno : ENOMEM);
		snprintf(err, err_size, "%s: %s", tmp, strerror(-ret));
		if (out)
			fclose(out);
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	ret = write(out, ctx, err, err_size);
	if (fclose(out) != 0 && ret >= 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", tmp, strerror(errno));
	}
	if (ret < 0) {
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	ret = bci_atomic_commit(fd, tmp, path);
	if (ret < 0)
		snprintf(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

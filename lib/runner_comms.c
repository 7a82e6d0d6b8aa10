// SPDX-License-Identifier: MIT
/* igt_runner's socket packets and comms dumps: the format is at the top of runner_comms.h. */
#include "runner_comms.h"

#include "igt_output_strings.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *const type_names[BCI_COMMS_TYPE_COUNT] = BCI_IGT_PACKET_NAMES;

const char *bci_comms_type_name(uint32_t type)
{
	return type < BCI_COMMS_TYPE_COUNT ? type_names[type] : "unknown";
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The payload, read field by field: a field that is not whole sets missing. */
struct cursor {
	const unsigned char *p, *end;
	bool missing;
};

static const char *take_string(struct cursor *c)
{
	const unsigned char *nul;

	if (c->missing)
		return NULL;
	nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
	if (!nul) {
		c->missing = true;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

static bool take_bytes(struct cursor *c, void *out, size_t n)
{
	if (c->missing || (size_t)(c->end - c->p) < n) {
		c->missing = true;
		return false;
	}
	memcpy(out, c->p, n);
	c->p += n;
	return true;
}

int bci_comms_packet_decode(const void *data, size_t len, struct bci_comms_packet *p)
{
	const unsigned char *b = data;
	struct cursor c;

	memset(p, 0, sizeof(*p));
	if (len < BCI_COMMS_HEADER_SIZE || get_u32(b) != len)
		return -EINVAL;
	p->size = get_u32(b);
	p->type = get_u32(b + 4);
	memcpy(&p->pid, b + 8, 4);
	memcpy(&p->tid, b + 12, 4);
	c = (struct cursor){ b + BCI_COMMS_HEADER_SIZE, b + len, false };
	switch (p->type) {
	case BCI_COMMS_LOG:
		take_bytes(&c, &p->stream, 1);
		p->text = take_string(&c);
		break;
	case BCI_COMMS_EXEC:
	case BCI_COMMS_VERSION:
		p->text = take_string(&c);
		break;
	case BCI_COMMS_EXIT:
		take_bytes(&c, &p->exit_status, 4);
		p->time = take_string(&c);
		break;
	case BCI_COMMS_SUBTEST_START:
	case BCI_COMMS_DYNAMIC_START:
		p->name = take_string(&c);
		break;
	case BCI_COMMS_SUBTEST_RESULT:
	case BCI_COMMS_DYNAMIC_RESULT:
		p->name = take_string(&c);
		p->result = take_string(&c);
		p->time = take_string(&c);
		p->reason = take_string(&c);
		break;
	case BCI_COMMS_RESULT_OVERRIDE:
		p->result = take_string(&c);
		break;
	default:
		c.missing = true;
		break;
	}
	p->complete = !c.missing;
	return 0;
}

int bci_comms_next(const char *buf, size_t len, size_t *pos, struct bci_comms_packet *p,
		   char *err, size_t err_size)
{
	const unsigned char *b = (const unsigned char *)buf + *pos;
	size_t left = len - *pos;
	uint32_t size;

	if (*pos >= len)
		return 0;
	if (left < 4 || get_u32(b) != BCI_COMMS_CANARY) {
		if (err && err_size)
			snprintf(err, err_size, "offset %zu: no record canary (0x%08x expected)", *pos,
				 BCI_COMMS_CANARY);
		return -EINVAL;
	}
	if (left - 4 < BCI_COMMS_HEADER_SIZE) {
		if (err && err_size)
			snprintf(err, err_size, "offset %zu: record cut inside its packet header", *pos);
		return -EINVAL;
	}
	size = get_u32(b + 4);
	if (size < BCI_COMMS_HEADER_SIZE || size > left - 4) {
		if (err && err_size)
			snprintf(err, err_size, "offset %zu: packet size %u %s", *pos, size,
				 size < BCI_COMMS_HEADER_SIZE ? "under its header's 16 bytes"
							      : "past the end of the file");
		return -EINVAL;
	}
	bci_comms_packet_decode(b + 4, size, p);
	*pos += 4 + (size_t)size;
	return 1;
}

size_t bci_comms_valid_prefix(const char *buf, size_t len)
{
	struct bci_comms_packet p;
	size_t pos = 0, good = 0;

	while (bci_comms_next(buf, len, &pos, &p, NULL, 0) == 1)
		good = pos;
	return good;
}

/* Appends a field to the packet being built; only counts past the end of @buf. */
struct builder {
	unsigned char *buf;
	size_t size, used;
};

static void put(struct builder *b, const void *data, size_t n)
{
	if (b->buf && b->used <= b->size && n <= b->size - b->used)
		memcpy(b->buf + b->used, data, n);
	b->used += n;
}

static void put_string(struct builder *b, const char *s)
{
	if (!s)
		s = "";
	put(b, s, strlen(s) + 1);
}

ssize_t bci_comms_packet_encode(const struct bci_comms_packet *p, void *buf, size_t size)
{
	struct builder b = { buf, size, BCI_COMMS_HEADER_SIZE };
	int32_t pid = (int32_t)getpid(), tid = (int32_t)syscall(SYS_gettid);
	uint32_t total;

	switch (p->type) {
	case BCI_COMMS_LOG:
		put(&b, &p->stream, 1);
		put_string(&b, p->text);
		break;
	case BCI_COMMS_EXEC:
	case BCI_COMMS_VERSION:
		put_string(&b, p->text);
		break;
	case BCI_COMMS_EXIT:
		put(&b, &p->exit_status, 4);
		put_string(&b, p->time);
		break;
	case BCI_COMMS_SUBTEST_START:
	case BCI_COMMS_DYNAMIC_START:
		put_string(&b, p->name);
		break;
	case BCI_COMMS_SUBTEST_RESULT:
	case BCI_COMMS_DYNAMIC_RESULT:
		put_string(&b, p->name);
		put_string(&b, p->result);
		put_string(&b, p->time);
		put_string(&b, p->reason);
		break;
	case BCI_COMMS_RESULT_OVERRIDE:
		put_string(&b, p->result);
		break;
	default:
		return -EINVAL;
	}
	if (b.used > UINT32_MAX)
		return -EINVAL;
	total = (uint32_t)b.used;
	if (buf && b.used <= size) {
		unsigned char *h = buf;
		memcpy(h, &total, 4);
		memcpy(h + 4, &p->type, 4);
		memcpy(h + 8, &pid, 4);
		memcpy(h + 12, &tid, 4);
	}
	return (ssize_t)b.used;
}

int bci_comms_record_write(int fd, const void *packet, size_t len)
{
	uint32_t canary = BCI_COMMS_CANARY;
	struct iovec iov[2] = { { &canary, 4 }, { (void *)packet, len } };
	size_t want = 4 + len;

	while (want > 0) {
		ssize_t n = writev(fd, iov, 2);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		want -= (size_t)n;
		/* A short write (a full disk) continues where it stopped. */
		for (int i = 0; i < 2; i++) {
			size_t step = (size_t)n < iov[i].iov_len ? (size_t)n : iov[i].iov_len;
			iov[i].iov_base = (char *)iov[i].iov_base + step;
			iov[i].iov_len -= step;
			n -= (ssize_t)step;
		}
	}
	return 0;
}

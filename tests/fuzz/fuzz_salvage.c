// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the salvage area's reader (lib/salvage.c), which reads
 * whatever the end of a machine's disk holds. The first BCI_SALVAGE_FOOTER_SIZE
 * bytes are a footer block: one it accepts formats back to the same block's
 * meaning. The rest is a payload on an in-memory disk, walked entry by entry
 * under a footer made for it (its digest right, the entry count from the
 * input's first byte): every entry it hands out has a safe path and lies
 * inside the payload, and a refusal says why.
 */
#include "salvage.h"
#include "sha256.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	uint64_t end;
};

static int entry_seen(const struct bci_salvage_entry *e, int fd, uint64_t data_offset, void *ctx)
{
	struct walk *w = ctx;
	char why[256];

	(void)fd;
	if (bci_salvage_path_check(e->path, why, sizeof(why)) < 0 || e->mode > 07777 ||
	    (e->dir && e->size) || data_offset > w->end || e->size > w->end - data_offset)
		abort();
	return 0;
}

static void footer_round_trip(const uint8_t *data, size_t size)
{
	char block[BCI_SALVAGE_FOOTER_SIZE], again[BCI_SALVAGE_FOOTER_SIZE], err[512] = "";
	struct bci_salvage_footer f, back;
	int ret;

	memset(block, 0, sizeof(block));
	memcpy(block, data, size < sizeof(block) ? size : sizeof(block));
	ret = bci_salvage_footer_parse(block, sizeof(block), 1ULL << 40, &f, err, sizeof(err));
	if (ret == -EBADMSG && !err[0])
		abort();
	if (ret < 0)
		return;
	if (bci_salvage_footer_format(&f, again, err, sizeof(err)) < 0 ||
	    bci_salvage_footer_parse(again, sizeof(again), 1ULL << 40, &back, err, sizeof(err)) < 0 ||
	    memcmp(&f, &back, sizeof(f)))
		abort();
}

static void payload_walk(const uint8_t *data, size_t size)
{
	struct bci_salvage_footer f = { .payload_offset = 0, .payload_size = size - 1,
					.entries = data[0] };
	struct walk w = { .end = size - 1 };
	struct bci_sha256 sha;
	char err[512] = "";
	int fd, ret;

	fd = memfd_create("salvage", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(fd);
		return;
	}
	bci_sha256_init(&sha);
	bci_sha256_update(&sha, data + 1, size - 1);
	bci_sha256_final_hex(&sha, f.payload_sha256);
	if (bci_salvage_payload_check(fd, &f, err, sizeof(err)) != 0)
		abort();
	ret = bci_salvage_each(fd, &f, entry_seen, &w, err, sizeof(err));
	if (ret != 0 && (ret != -EBADMSG || !err[0]))
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	footer_round_trip(data, size);
	payload_walk(data, size);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Unified kernel images: systemd's EFI stub (Debian's systemd-boot-efi,
 * /usr/lib/systemd/boot/efi/linuxx64.efi.stub) with the kernel, the initramfs,
 * the command line and an os-release added as PE sections by objcopy (Debian
 * 12 has no ukify). objcopy stamps the PE header with the current time, so
 * the time stamp is set to SOURCE_DATE_EPOCH afterwards and the PE checksum
 * recomputed: the same inputs give the same bytes.
 */
#ifndef BUILDER_UKI_H
#define BUILDER_UKI_H

#include <stddef.h>
#include <stdint.h>

#include "message.h"

#define BUILDER_UKI_STUB "/usr/lib/systemd/boot/efi/linuxx64.efi.stub"

struct builder_uki {
	const char *stub;	/* NULL: BUILDER_UKI_STUB */
	const char *kernel, *initrd;
	const char *cmdline;
	const char *osrel;	/* os-release text */
	int64_t epoch;
	const char *work_dir;	/* for the section files */
};

/* Writes the UKI to @out (a new file; the caller renames it into place). */
int builder_uki_make(const struct builder_uki *uki, const char *out, char *err, size_t err_size);

/*
 * Sets the COFF time stamp of the PE image in @buf to @stamp and recomputes
 * the optional header's checksum. -EINVAL when @buf is not a PE image.
 */
int builder_pe_set_timestamp(uint8_t *buf, size_t len, uint32_t stamp);

/* The next free virtual address after the PE image's sections, page aligned. */
int builder_pe_end_address(const uint8_t *buf, size_t len, uint64_t *end);

#endif

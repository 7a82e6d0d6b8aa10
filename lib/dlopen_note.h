/* SPDX-License-Identifier: MIT */
/*
 * ELF dlopen metadata: the libraries a program loads with dlopen(), written
 * into the program as ELF notes so that whoever packs it (a distribution's
 * packager, our image builder) knows what to bring besides DT_NEEDED. The
 * format is the UAPI group's "ELF dlopen metadata" specification (systemd
 * writes and reads the same notes):
 *
 *   a note in section .note.dlopen (in a PT_NOTE segment once linked),
 *   owner "FDO", type 0x407c0c0a, whose descriptor is a NUL-terminated
 *   JSON array of objects, one per library:
 *     [{"soname":["libcurl.so.4"],"feature":"upload",
 *       "description":"collect's upload","priority":"recommended"}]
 *   "soname" (required): the library's names, alternatives in the order
 *   to try them; "feature", "description": words for people; "priority":
 *   "required" (the program cannot work without it), "recommended" (the
 *   default: a main feature needs it) or "suggested" (an optional one).
 *
 * The writer is BCI_DLOPEN_NOTE() (bootci-aggregator's lazily loaded
 * libraries, aggregator/lazy/); the reader, bci_dlopen_note_parse(), reads
 * one descriptor (the builder finds the notes in a program's PT_NOTE
 * segments, builder/elf_deps.c, and brings the required and recommended
 * libraries into the image).
 */
#ifndef BCI_DLOPEN_NOTE_H
#define BCI_DLOPEN_NOTE_H

#include <stddef.h>
#include <stdint.h>

#define BCI_DLOPEN_NOTE_OWNER "FDO"
#define BCI_DLOPEN_NOTE_TYPE 0x407c0c0aU

/*
 * One note, @json a string literal (the descriptor). An ELF note is its
 * header, the owner's name and the descriptor, each padded to 4 bytes.
 */
#define BCI_DLOPEN_NOTE(id, json)                                                       \
	__attribute__((used, section(".note.dlopen"), aligned(4))) static const struct {  \
		uint32_t namesz, descsz, type;                                            \
		char owner[(sizeof(BCI_DLOPEN_NOTE_OWNER) + 3) & ~(size_t)3];             \
		char desc[(sizeof(json) + 3) & ~(size_t)3];                               \
	} id = { sizeof(BCI_DLOPEN_NOTE_OWNER), sizeof(json), BCI_DLOPEN_NOTE_TYPE,        \
		 BCI_DLOPEN_NOTE_OWNER, json }

enum bci_dlopen_priority {
	BCI_DLOPEN_REQUIRED,
	BCI_DLOPEN_RECOMMENDED,
	BCI_DLOPEN_SUGGESTED,
};

struct bci_dlopen_library {
	char **sonames; /* the alternatives, at least one */
	size_t count;
	enum bci_dlopen_priority priority;
};

/*
 * Appends the libraries of the descriptor @desc (@len bytes, up to and
 * perhaps past its NUL: padding) to *@libs (*@count of them, grown). 0, or
 * -EINVAL with @err naming what is wrong (not JSON, not an array of objects,
 * a soname that is missing, empty or holds a '/', an unknown priority), and
 * nothing appended; -ENOMEM.
 */
int bci_dlopen_note_parse(const char *desc, size_t len, struct bci_dlopen_library **libs,
			  size_t *count, char *err, size_t err_size);

void bci_dlopen_libraries_free(struct bci_dlopen_library *libs, size_t count);

#endif

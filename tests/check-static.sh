#!/usr/bin/env bash
# Asserts that BINARY is a static musl executable: an ELF file with no program
# interpreter, no dynamic section and none of glibc's start-up code; prints
# its size.
#
# usage: check-static.sh BINARY
set -euo pipefail
export LC_ALL=C
bin=$1
if ! readelf -hW "$bin" >/dev/null 2>&1; then
	echo "check-static: $bin is not an ELF file" >&2; exit 1
fi
if readelf -lW "$bin" | grep 'INTERP' >/dev/null; then
	echo "check-static: $bin has a PT_INTERP: not static" >&2; exit 1
fi
if readelf -dW "$bin" 2>/dev/null | grep 'NEEDED' >/dev/null; then
	echo "check-static: $bin needs shared libraries" >&2; exit 1
fi
# A static glibc binary has no symbol versions left to tell it by, but glibc's
# crt1.o (csu/abi-note.S) puts an NT_GNU_ABI_TAG note ("OS: Linux, ABI: 3.2.0",
# section .note.ABI-tag) into every program it starts, static or dynamic, and
# `strip` keeps it (an allocated section). musl's crt1.o carries no note, and
# the linker adds only build-id and property notes, never this one.
if readelf -nW "$bin" | grep 'NT_GNU_ABI_TAG' >/dev/null; then
	echo "check-static: $bin is linked with glibc (it has glibc's NT_GNU_ABI_TAG note), not musl" >&2; exit 1
fi
echo "$(basename "$bin"): static musl, $(stat -c %s "$bin") bytes"

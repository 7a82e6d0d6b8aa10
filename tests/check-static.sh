#!/usr/bin/env bash
# Asserts that BINARY is a static musl executable: no program interpreter, no
# dynamic section, no glibc symbol versions; prints its size.
set -euo pipefail
bin=$1
if readelf -lW "$bin" | grep 'INTERP' >/dev/null; then
	echo "check-static: $bin has a PT_INTERP: not static" >&2; exit 1
fi
if readelf -dW "$bin" 2>/dev/null | grep 'NEEDED' >/dev/null; then
	echo "check-static: $bin needs shared libraries" >&2; exit 1
fi
if readelf -sW "$bin" | grep 'GLIBC_' >/dev/null; then
	echo "check-static: $bin carries glibc symbols" >&2; exit 1
fi
echo "$(basename "$bin"): static musl, $(stat -c %s "$bin") bytes"

#!/usr/bin/env bash
# One program per machine, each linking exactly the libraries it uses:
# bootci-collect (the known-good image's uploader) needs none of the master's
# libraries, bootci-aggregator (the CI master) none of collect's, and neither
# names a library it does not use (ldd -u: unused direct dependencies).
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
export LC_ALL=C

collect=$BUILD/host/bin/bootci-collect
master=$BUILD/host/bin/bootci-aggregator
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

needed() { # PROGRAM: its DT_NEEDED entries, one a line
	readelf -dW "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'
}
needed "$collect" >"$work/collect"
needed "$master" >"$work/master"

check "bootci-collect needs libcurl and libzstd (the run archive's writer)" \
	bash -c 'grep -q "^libcurl\.so" "$1" && grep -q "^libzstd\.so" "$1"' _ "$work/collect"
# The run archive is lib/run_archive's, written and read there over libzstd: no libarchive.
for side in collect master; do
	check "the $side program does not need libarchive" \
		bash -c '! grep -q "^libarchive\.so" "$1"' _ "$work/$side"
done
check "bootci-collect needs none of the master's libraries: $(tr '\n' ' ' <"$work/collect")" \
	bash -c '! grep -qE "^lib(pq|microhttpd|sqlite3)\.so" "$1"' _ "$work/collect"
check "bootci-aggregator needs SQLite, libpq and libmicrohttpd" \
	bash -c 'grep -q "^libsqlite3\.so" "$1" && grep -q "^libpq\.so" "$1" && grep -q "^libmicrohttpd\.so" "$1"' \
	_ "$work/master"
check "bootci-aggregator needs none of collect's EFI libraries: $(tr '\n' ' ' <"$work/master")" \
	bash -c '! grep -qE "^libefi(boot|var)\.so" "$1"' _ "$work/master"
for program in "$collect" "$master"; do
	ldd -u "$program" >"$work/unused" 2>&1
	check "$(basename "$program") has no unused direct dependency" \
		bash -c '! grep -q "^[[:space:]]*/" "$1"' _ "$work/unused" || diag <"$work/unused"
done
check "bootci-results is static" bash -c '! readelf -lW "$1" | grep -q INTERP' _ "$BUILD/host/bin/bootci-results"
done_testing

#!/usr/bin/env bash
# One program per machine, each linking exactly the libraries it uses:
# bootci-collect (the known-good image's uploader) is static musl, carrying
# libcurl and its TLS (OpenSSL) and none of the master's libraries, nor
# Debian's libefivar (lib/efi reads the boot entries); bootci-aggregator (the
# CI master) needs its own and names no library it does not use (ldd -u:
# unused direct dependencies).
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
export LC_ALL=C

collect=$BUILD/musl/bin/bootci-collect
master=$BUILD/host/bin/bootci-aggregator
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

needed() { # PROGRAM: its DT_NEEDED entries, one a line
	readelf -dW "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'
}
needed "$master" >"$work/master"
# The functions linked into the static collect, one a line.
nm --defined-only "$collect" | awk '{ print $3 }' | sort -u >"$work/collect-symbols"
has() { grep -qx "$1" "$work/collect-symbols"; }

check "bootci-collect is static musl (no interpreter, no DT_NEEDED, not glibc's)" \
	bash -c '"$1" "$2" >/dev/null' _ "$SRC/tests/check-static.sh" "$collect"
check "bootci-collect carries libcurl and OpenSSL (https)" \
	bash -c 'grep -qx curl_easy_perform "$1" && grep -qx SSL_CTX_new "$1"' _ "$work/collect-symbols"
for symbol in MHD_start_daemon PQconnectdb sqlite3_open_v2 efi_get_variable archive_write_new; do
	check "bootci-collect carries none of the master's libraries, nor libefivar or libarchive: no $symbol" \
		bash -c '! grep -qx "$1" "$2"' _ "$symbol" "$work/collect-symbols"
done
check "... and reads EFI variables through lib/efi" has bci_efi_boot_entries
check "... and writes its run archives through lib/run_archive over libzstd" \
	bash -c 'grep -qx bci_run_archive_write "$1" && grep -qx ZSTD_compressStream2 "$1"' _ "$work/collect-symbols"
check "the master does not need libarchive (lib/run_archive reads the run archive)" \
	bash -c '! grep -q "^libarchive\.so" "$1"' _ "$work/master"
check "bootci-aggregator needs SQLite, libpq and libmicrohttpd" \
	bash -c 'grep -q "^libsqlite3\.so" "$1" && grep -q "^libpq\.so" "$1" && grep -q "^libmicrohttpd\.so" "$1"' \
	_ "$work/master"
ldd -u "$master" >"$work/unused" 2>&1
check "bootci-aggregator has no unused direct dependency" \
	bash -c '! grep -q "^[[:space:]]*/" "$1"' _ "$work/unused" || diag <"$work/unused"
check "bootci-results is static" bash -c '! readelf -lW "$1" | grep -q INTERP' _ "$BUILD/host/bin/bootci-results"
done_testing

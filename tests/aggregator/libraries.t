#!/usr/bin/env bash
# The libraries bootci-aggregator loads at start: only those every command
# needs. libcurl, libpq, libmicrohttpd and libarchive (and GnuTLS, OpenSSL,
# Kerberos, LDAP and ICU behind them) are loaded on first use
# (aggregator/lazy/); tests/unit/test_lazy.c checks the shims themselves.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
export LC_ALL=C

aggregator=$BUILD/host/bin/bootci-aggregator
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan 4

readelf -dW "$aggregator" >"$work/dynamic" 2>&1
grep -o 'Shared library: \[[^]]*\]' "$work/dynamic" | sed 's/.*\[\(.*\)\]/\1/' >"$work/needed"
check "the aggregator names the libraries it needs (readelf)" grep -q '^libsqlite3\.so' "$work/needed"
check "none of the libraries loaded on first use is needed at start: $(tr '\n' ' ' <"$work/needed")" \
	bash -c '! grep -qE "^lib(curl|pq|microhttpd|archive|gnutls)\.so" "$1"' _ "$work/needed"

# A command that needs none of them does not load them (the loader's own list of what it mapped).
LD_DEBUG=files "$aggregator" --help >/dev/null 2>"$work/loaded"
check "--help ran with the loader's trace" grep -q 'file=libsqlite3.so' "$work/loaded"
check "--help loaded none of the libraries loaded on first use" \
	bash -c '! grep -qE "file=lib(curl|pq|microhttpd|archive|gnutls)\.so" "$1"' _ "$work/loaded"

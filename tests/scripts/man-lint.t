#!/usr/bin/env bash
# The man pages (install.mk: */man/NAME.SECTION.scd, scdoc, built into
# $BUILD/man/): every source has its built page, named as its title line says;
# every page lints clean under mandoc -T lint at warning level (any warning
# fails, with mandoc's words); every bootci page a page refers to exists.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
export LC_ALL=C

mapfile -t sources < <(cd "$SRC" && find aggregator executor builder -path '*/man/*.scd' | sort)
check "man page sources found (*/man/*.scd): ${#sources[@]}" test "${#sources[@]}" -gt 0 ||
	{ done_testing; exit 0; }

for source in "${sources[@]}"; do
	name=$(basename "$source" .scd)
	page=$BUILD/man/$name
	title=$(head -n 1 "$SRC/$source" | cut -d' ' -f1)
	# NAME.SECTION.scd opens with NAME(SECTION)
	check "$source: its title line names it ($title)" test "$title" = "${name%.*}(${name##*.})"
	if ! check "$source: built as \$BUILD/man/$name" test -s "$page"; then
		continue
	fi
	if ! out=$(mandoc -T lint -W warning "$page" 2>&1) || [ -n "$out" ]; then
		not_ok "$name: mandoc -T lint -W warning is clean"
		printf '%s\n' "$out" | diag
	else
		ok "$name: mandoc -T lint -W warning is clean"
	fi
done

# Cross-references: *bootci-NAME*(N) in any page names a page that is built.
missing=$(cd "$SRC" && grep -ohE '\*bootci[a-z.-]*\*\([158]\)' "${sources[@]}" | sort -u |
	sed -E 's/\*([^*]+)\*\(([0-9])\)/\1.\2/' | while read -r ref; do
		[ -s "$BUILD/man/$ref" ] || echo "$ref"
	done)
check "every bootci page a page refers to exists${missing:+ (missing: ${missing//$'\n'/ })}" test -z "$missing"
done_testing

#!/usr/bin/env bash
# The README's fault matrix cannot rot: every row's last column names the tests that prove
# it, as `FILE` "TEST NAME" pairs; each FILE must be a test that `make check` runs (a
# tests/*/*.t script, a tests/unit/test_*.c or a tests/fuzz/fuzz_*.c) and each TEST NAME
# must appear in it, word for word. A row without any test fails too.
set -uo pipefail
: "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

readme=$SRC/README.md
# The table: the lines starting with '|' after the "Fault matrix" heading (of any level), up
# to the next heading; its header and separator lines are left out.
rows=$(awk '/^#+ / { inside = ($0 ~ /^#+ Fault matrix$/) } inside && /^\|/' "$readme" | tail -n +3)
check "README.md has a fault matrix with rows" test -n "$rows" || { done_testing; exit 1; }

# cited LINE: the `FILE` "NAME" pairs of the row's last column, one "FILE<TAB>NAME" a line
cited() {
	# shellcheck disable=SC2016 # the backquotes are the README's, not command substitutions
	awk -F'|' '{ print $(NF - 1) }' <<<"$1" |
		grep -oE '`[^`]+` "[^"]+"' |
		sed -E 's/^`([^`]+)` "([^"]*)"$/\1\t\2/'
}

while IFS= read -r row; do
	fault=$(awk -F'|' '{ print $2 }' <<<"$row" | sed -E 's/^ +| +$//g')
	pairs=$(cited "$row")
	if [ -z "$pairs" ]; then
		not_ok "$fault: no test cited"
		continue
	fi
	while IFS=$'\t' read -r file name; do
		case $file in
		tests/*/*.t | tests/unit/test_*.c | tests/fuzz/fuzz_*.c) ;;
		*) not_ok "$fault: $file is not a test make check runs"; continue ;;
		esac
		if [ ! -f "$SRC/$file" ]; then
			not_ok "$fault: $file does not exist"
		elif [ "${file##*.}" = t ] && [ ! -x "$SRC/$file" ]; then
			not_ok "$fault: $file is not executable (make check would not run it)"
		elif ! grep -qF -- "$name" "$SRC/$file"; then
			not_ok "$fault: \"$name\" is not in $file"
		else
			ok "$fault: $file has \"$name\""
		fi
	done <<<"$pairs"
done <<<"$rows"
done_testing

#!/usr/bin/env bash
# "A second `make` rebuilds nothing" (README): after `make` (which `make check`
# runs first), make -q finds every target of `all` up to date. make -W shows
# that the question is a real one: with one source pretended changed, make
# -q says a rebuild is due. Nothing is built or touched here.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

# make as a person runs it, also under `make check`: the parent's MAKEFLAGS (its jobserver) and
# MAKELEVEL would change what make prints.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$SRC" BUILD="$BUILD" "$@"; }

plan 3
mk -q all
status=$?
check "make -q all: everything is up to date after make" test "$status" = 0 ||
	{ echo "what a second make would run (make -n all):"; mk -n all 2>&1 | head -n 40; } | diag
check "make -n all runs nothing" test "$(mk -n all 2>&1)" = "make: Nothing to be done for 'all'."
mk -q -W lib/fsutil.c all
check "make -q with lib/fsutil.c pretended changed: a rebuild is due (status 1)" test $? = 1

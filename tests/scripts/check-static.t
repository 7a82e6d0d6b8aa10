#!/usr/bin/env bash
# tests/check-static.sh, which guards the executor's static musl build, tells
# the one good kind of binary from its look-alikes: the same tiny program built
# with musl-gcc -static passes; built with gcc -static (static glibc) or plain
# gcc (dynamic glibc) it is refused, with the reason named; so is a non-ELF file.
set -uo pipefail
: "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
check_static=$SRC/tests/check-static.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$work/hello.c"

plan 5

# verdict NAME WANT_STATUS WANT_TEXT BINARY: check-static.sh on BINARY exits
# with WANT_STATUS and says WANT_TEXT (on stdout when it passes, stderr if not).
verdict() {
	local name=$1 want_status=$2 want_text=$3 bin=$4 status
	"$check_static" "$bin" >"$work/stdout" 2>"$work/stderr"
	status=$?
	if [ "$status" != "$want_status" ]; then
		not_ok "$name: exit status $status, wanted $want_status"
		diag <"$work/stdout"
		diag <"$work/stderr"
	elif ! grep -qF -- "$want_text" "$work/stdout" "$work/stderr"; then
		not_ok "$name: output lacks '$want_text'"
		diag <"$work/stdout"
		diag <"$work/stderr"
	else
		ok "$name: $(cat "$work/stdout" "$work/stderr")"
	fi
}

# build NAME COMPILER ARGS...: compiles hello.c to $work/NAME, or says why not.
build() {
	local name=$1
	shift
	if ! "$@" -o "$work/$name" "$work/hello.c" 2>"$work/cc.log"; then
		diag <"$work/cc.log"
		return 1
	fi
}

if build musl musl-gcc -static; then
	verdict "musl-gcc -static" 0 "musl: static musl" "$work/musl"
else
	not_ok "musl-gcc -static: could not build the program"
fi
if build glibc-static gcc -static; then
	verdict "gcc -static" 1 "linked with glibc" "$work/glibc-static"
	# The note is all that tells it; stripping the binary must not hide it.
	strip "$work/glibc-static"
	verdict "gcc -static, stripped" 1 "linked with glibc" "$work/glibc-static"
else
	# Static glibc needs libc6-dev's libc.a, which build-essential brings.
	not_ok "gcc -static: could not build the program"
	not_ok "gcc -static, stripped: could not build the program"
fi
if build glibc-dynamic gcc; then
	verdict "gcc (dynamic)" 1 "has a PT_INTERP: not static" "$work/glibc-dynamic"
else
	not_ok "gcc (dynamic): could not build the program"
fi
verdict "a C source file" 1 "is not an ELF file" "$work/hello.c"

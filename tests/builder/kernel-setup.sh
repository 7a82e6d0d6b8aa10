# shellcheck shell=bash
# Sourced by the builder scripts that need the test kernel: TAP helpers,
# $builder, $kver and $kroot of build/kernel, and a scratch $work removed at
# exit. Without a kernel (make kernel), the script is skipped whole (the plan
# 1..0 # SKIP, one skip for tests/run-tests.sh) and ends.
: "${BUILD:?}" "${SRC:?}"
builder=$BUILD/host/bin/bootci-builder
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

if [ ! -f "$BUILD/kernel/release" ]; then
	echo "1..0 # SKIP no kernel under $BUILD/kernel (make kernel)"
	exit 0
fi
# shellcheck disable=SC2034 # used by the sourcing scripts
kver=$(cat "$BUILD/kernel/release")
# shellcheck disable=SC2034
kroot=$BUILD/kernel/root
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

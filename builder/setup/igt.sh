#!/usr/bin/env bash
# Builds IGT from its source tarball (../shared/igt/, see its README.md): the
# build packages (igt-deps.sh), the tarball unpacked to OUTDIR/src, meson's build
# folder OUTDIR/build, and only the targets listed in builder/setup/igt-binaries
# (igt_runner, igt_results, the driver-generic tests), and OUTDIR/test-list.txt
# (igt_runner's list of those tests, for the image). Writes OUTDIR/stamp last,
# holding the tarball's sha256 and the target list: the same inputs rebuild
# nothing; a new tarball starts from a fresh source and build folder.
#
# usage: igt.sh TARBALL OUTDIR
set -euo pipefail

[ $# = 2 ] || { echo "usage: igt.sh TARBALL OUTDIR" >&2; exit 2; }
tarball=$1
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$tarball" ] || { echo "igt: no such tarball: $tarball" >&2; exit 1; }
out=$(mkdir -p "$2" && cd "$2" && pwd)

mapfile -t targets < <(grep -v '^#' "$here/igt-binaries" | grep -v '^$')
want="$(sha256sum <"$tarball" | cut -d' ' -f1) ${targets[*]}"
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$want" ] && [ -f "$out/test-list.txt" ]; then
	exit 0
fi

"$here/igt-deps.sh"

# A different tarball (or none unpacked yet): fresh source and build folders.
sum=${want%% *}
if [ ! -f "$out/src.sha256" ] || [ "$(cat "$out/src.sha256")" != "$sum" ]; then
	echo "igt: unpacking $tarball"
	rm -rf "$out/src" "$out/build" "$out/src.tmp" "$out/src.sha256"
	mkdir -p "$out/src.tmp"
	tar -xJf "$tarball" -C "$out/src.tmp" --strip-components=1
	mv "$out/src.tmp" "$out/src"
	echo "$sum" >"$out/src.sha256"
fi

if [ ! -f "$out/build/build.ninja" ]; then
	echo "igt: meson setup (log: $out/meson.log)"
	rm -rf "$out/build"
	# The options of ../shared/igt/README.md: tests and runner only, no driver
	# library from libdrm, and a RUNPATH so the binaries find libigt.so wherever
	# the builder stages them from this folder.
	meson setup "$out/build" "$out/src" -Dtests=enabled -Drunner=enabled \
		-Doverlay=disabled -Dchamelium=disabled -Dvalgrind=disabled -Dman=disabled \
		-Ddocs=disabled -Doping=disabled -Dlibdrm_drivers= -Duse_rpath=true \
		>"$out/meson.log" 2>&1 || { tail -n 30 "$out/meson.log" >&2; exit 1; }
fi

echo "igt: ninja ${#targets[@]} targets (log: $out/ninja.log)"
ninja -C "$out/build" "${targets[@]}" >"$out/ninja.log" 2>&1 || {
	tail -n 30 "$out/ninja.log" >&2
	exit 1
}
# igt_runner reads TEST_ROOT/test-list.txt to know the test binaries; meson's
# own lists every test IGT has, so write the one of the binaries built here.
{
	echo TESTLIST
	for t in "${targets[@]}"; do
		case $t in tests/*) printf '%s ' "${t#tests/}" ;; esac
	done | sed 's/ $//'
	printf '\nEND TESTLIST\n'
} >"$out/test-list.txt.tmp"
mv "$out/test-list.txt.tmp" "$out/test-list.txt"
echo "$want" >"$out/stamp.tmp"
mv "$out/stamp.tmp" "$out/stamp"

#!/usr/bin/env bash
# Fetches the test kernel: the current Debian linux-image-*-amd64 named by the
# linux-image-amd64 metapackage, downloaded with `apt-get download` and unpacked
# with `dpkg -x` under OUTDIR (never installed on the host). Writes:
#   OUTDIR/release   the kernel release (e.g. 6.1.0-57-amd64)
#   OUTDIR/vmlinuz   the kernel image
#   OUTDIR/root/     the unpacked package (lib/modules/<release>/ with modules.dep)
#   OUTDIR/deb/      the package itself (linux-image-<release>_<version>_amd64.deb), kept
#                    for `bootci-builder test-image --kernel-deb` (OUTDIR/kernel.deb links it)
# Idempotent: nothing is downloaded when that release is already there and
# unpacked; a tree unpacked before the .deb was kept only downloads the .deb.
#
# usage: fetch-kernel.sh OUTDIR
set -euo pipefail
# depmod lives in /sbin, not in an ordinary user's PATH on Debian; it needs no
# root to write indexes under a directory of ours (-b).
PATH=$PATH:/usr/sbin:/sbin

out=$(mkdir -p "$1" && cd "$1" && pwd)
package=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1)
if [ -z "$package" ]; then
	echo "fetch-kernel: cannot resolve linux-image-amd64 to a kernel package (run apt-get update?)" >&2
	exit 1
fi
release=${package#linux-image-}

deb=$(find "$out/deb" -maxdepth 1 -name "${package}_*.deb" 2>/dev/null | head -n 1 || true)
unpacked=0
if [ -e "$out/release" ] && [ "$(cat "$out/release")" = "$release" ] && [ -e "$out/vmlinuz" ]; then
	unpacked=1
fi
if [ "$unpacked" = 1 ] && [ -n "$deb" ]; then
	touch "$out/release"
	exit 0
fi

tmp=$(mktemp -d "$out/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -z "$deb" ]; then
	echo "fetch-kernel: $package"
	(cd "$tmp" && apt-get download -q "$package") >"$tmp/log" 2>&1 || {
		cat "$tmp/log" >&2
		exit 1
	}
	rm -rf "$out/deb"
	mkdir -p "$tmp/deb"
	mv "$tmp"/"$package"_*.deb "$tmp/deb/"
	mv "$tmp/deb" "$out/deb"
	deb=$(find "$out/deb" -maxdepth 1 -name "${package}_*.deb" | head -n 1)
	ln -sfn "deb/$(basename "$deb")" "$out/kernel.deb"
fi
if [ "$unpacked" = 1 ]; then
	touch "$out/release"
	exit 0
fi
dpkg -x "$deb" "$tmp/root"
# The .deb ships no module indexes: generate them as the target's depmod would.
depmod -b "$tmp/root" "$release"
rm -rf "$out/root"
mv "$tmp/root" "$out/root"
cp "$out/root/boot/vmlinuz-$release" "$out/vmlinuz.tmp"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
echo "$release" >"$out/release.tmp"
mv "$out/release.tmp" "$out/release"

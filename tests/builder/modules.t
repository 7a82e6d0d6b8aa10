#!/usr/bin/env bash
# bootci-builder modules on the real Debian kernel tree: the closure of
# dependencies and soft dependencies is staged with its own depmod indexes,
# which kmod's own modprobe can then use; the result goes into an image.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
builder=$BUILD/host/bin/bootci-builder
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

if [ ! -f "$BUILD/kernel/release" ]; then
	echo "1..0 # SKIP no kernel tree under $BUILD/kernel (make kernel)"
	exit 0
fi
kver=$(cat "$BUILD/kernel/release")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
staging=$work/staging
mods=$staging/lib/modules/$kver

"$builder" modules --moddir "$BUILD/kernel/root" --kver "$kver" --out "$staging" \
	ext4 virtio_blk efivarfs i6300esb >"$work/list" 2>"$work/stderr"
check "modules succeeds ($(cat "$work/stderr"))" test $? = 0

for ko in kernel/fs/ext4/ext4.ko kernel/fs/jbd2/jbd2.ko kernel/fs/mbcache.ko kernel/lib/crc16.ko \
	kernel/drivers/block/virtio_blk.ko kernel/drivers/virtio/virtio.ko \
	kernel/drivers/virtio/virtio_ring.ko kernel/fs/efivarfs/efivarfs.ko \
	kernel/drivers/watchdog/i6300esb.ko kernel/drivers/watchdog/watchdog.ko \
	kernel/crypto/crc32c_generic.ko; do
	check "staged $ko" cmp "$BUILD/kernel/root/lib/modules/$kver/$ko" "$mods/$ko"
done
check "only the closure is staged (12 modules)" test "$(find "$mods" -name '*.ko*' | wc -l)" = 12
check "the list printed names every staged module" \
	test "$(wc -l <"$work/list")" = 12 -a "$(grep -c '^ext4 kernel/fs/ext4/ext4.ko$' "$work/list")" = 1
check "the list is sorted" test "$(cut -d' ' -f1 "$work/list")" = "$(cut -d' ' -f1 "$work/list" | LC_ALL=C sort)"
for f in modules.dep.bin modules.alias.bin modules.order modules.builtin modules.builtin.modinfo; do
	check "$f present" test -s "$mods/$f"
done
check "no staging.tmp left" test ! -e "$staging.tmp"

# kmod itself resolves ext4 inside the staged tree, through its indexes only.
deps=$(modprobe -d "$staging" -S "$kver" --show-depends ext4 2>&1)
check "modprobe --show-depends ext4 works on the staging" \
	grep -q "insmod $mods/kernel/fs/jbd2/jbd2.ko" <<<"$deps"
check "modprobe sees nothing outside the staging" \
	test -z "$(grep insmod <<<"$deps" | grep -v "insmod $mods/")"

# Aliases resolve; a second run replaces the tree whole.
touch "$staging/stale-marker"
"$builder" modules --moddir "$BUILD/kernel/root" --kver "$kver" --out "$staging" \
	fs-ext4 >"$work/list2" 2>"$work/stderr"
check "an alias (fs-ext4) resolves to ext4" grep -q '^ext4 ' "$work/list2"
check "a second run replaces the old tree" test ! -e "$staging/stale-marker" -a ! -e "$mods/kernel/fs/efivarfs/efivarfs.ko"

# A built-in module is accepted, listed as such, and has no file to copy.
builtin=$(head -n1 "$BUILD/kernel/root/lib/modules/$kver/modules.builtin")
builtin=$(basename "$builtin" .ko | tr - _)
"$builder" modules --moddir "$BUILD/kernel/root" --kver "$kver" --out "$work/builtin" \
	"$builtin" >"$work/list3" 2>"$work/stderr"
check "built-in $builtin is listed as built-in" grep -qx "$builtin built-in" "$work/list3"
check "built-in $builtin is not copied" test -z "$(find "$work/builtin" -name '*.ko*')"

# The staged tree goes into an image at /lib/modules.
"$builder" spec-from-dir "$staging/lib/modules" /lib/modules "$work/modules.spec"
check "spec-from-dir writes the spec" grep -q "^file /lib/modules/$kver/kernel/fs/ext4/ext4.ko $mods/kernel/fs/ext4/ext4.ko 0644 0 0\$" "$work/modules.spec"
"$builder" initramfs --compress zstd "$work/modules.spec" "$work/image.img"
names=$(zstd -dc "$work/image.img" | cpio -it --quiet)
check "image holds lib/modules/$kver/modules.dep.bin" grep -qx "lib/modules/$kver/modules.dep.bin" <<<"$names"
check "image holds the parents lib and lib/modules" test "$(head -n2 <<<"$names")" = $'lib\nlib/modules'

done_testing

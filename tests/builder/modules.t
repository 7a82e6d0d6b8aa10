#!/usr/bin/env bash
# bootci-builder modules on the real Debian kernel tree: the closure of
# dependencies and soft dependencies is staged with its own depmod indexes,
# which kmod's own modprobe can then use; the result goes into an image.
set -uo pipefail
# shellcheck source=tests/builder/kernel-setup.sh
. "$SRC/tests/builder/kernel-setup.sh"
staging=$work/staging
mods=$staging/lib/modules/$kver

"$builder" modules --moddir "$BUILD/kernel/root" --kver "$kver" --out "$staging" \
	ext4 virtio_blk efivarfs i6300esb >"$work/list" 2>"$work/stderr"
status=$?
check "modules succeeds" test "$status" = 0 || diag <"$work/stderr"

# kmod's modprobe on the same tree is the oracle: the modules it would insert for these four
# names, soft dependencies included (ext4's crc32c pulls crc32c-intel), and nothing else.
kdir=$BUILD/kernel/root/lib/modules/$kver
expected=$(for m in ext4 virtio_blk efivarfs i6300esb; do
	modprobe -d "$BUILD/kernel/root" -S "$kver" --show-depends "$m"
done | sed -n "s|^insmod $kdir/\([^ ]*\).*|\1|p" | LC_ALL=C sort -u)
staged=$(cd "$mods" && find . -name '*.ko*' | sed 's|^\./||' | LC_ALL=C sort)
check "modprobe's closure for the four names is non-trivial (the oracle works)" \
	test "$(grep -c . <<<"$expected")" -gt 4 -a "$(grep -c '^kernel/fs/jbd2/jbd2.ko$' <<<"$expected")" = 1
check "exactly modprobe's closure is staged ($(grep -c . <<<"$expected") modules)" test "$expected" = "$staged" ||
	diff <(echo "$expected") <(echo "$staged") | diag
for ko in $expected; do
	check "staged $ko unchanged" cmp "$kdir/$ko" "$mods/$ko"
done
check "the list printed names every staged module" \
	test "$(wc -l <"$work/list")" = "$(grep -c . <<<"$expected")" -a "$(grep -c '^ext4 kernel/fs/ext4/ext4.ko$' "$work/list")" = 1
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

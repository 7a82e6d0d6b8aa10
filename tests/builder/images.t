#!/usr/bin/env bash
# bootci-builder test-image / known-good: the three kernel input forms give the
# same initramfs; the ELF closure (DT_NEEDED, RUNPATH with $ORIGIN, the
# interpreter) and IGT (install prefix, build folder) land where the executor
# expects them; the same inputs and SOURCE_DATE_EPOCH give byte-identical
# outputs, the disk image included; the manifest covers every file.
set -uo pipefail
# shellcheck source=tests/builder/kernel-setup.sh
. "$SRC/tests/builder/kernel-setup.sh"
export SOURCE_DATE_EPOCH=1700000000
export EXECUTOR=$BUILD/musl/bin/bootci-executor BUSYBOX=/bin/busybox
export EXECUTOR_CONF=$SRC/initramfs/executor.conf FIXTURES=$BUILD/musl/bin/fixtures
export BOOTCI_EFI=$BUILD/musl/bin/bootci-efi
export KNOWN_GOOD_CONF=$SRC/images/known-good-executor.conf
export COLLECT=$BUILD/musl/bin/bootci-collect

names() { zstd -dc "$1" | cpio -it --quiet; }

# ---- the three kernel forms: a .deb, a build tree + INSTALL_MOD_PATH, vmlinuz + lib/modules/KVER
mods=$work/mods/lib/modules/$kver
mkdir -p "$mods"
"$builder" modules --moddir "$kroot" --kver "$kver" --out "$work/staged" ext4 >"$work/ext4.list"
cp -a "$work/staged/lib/modules/$kver/." "$mods/"
pkg=$work/pkg
mkdir -p "$pkg/DEBIAN" "$pkg/boot" "$pkg/lib/modules"
cp "$BUILD/kernel/vmlinuz" "$pkg/boot/vmlinuz-$kver"
cp -a "$mods" "$pkg/lib/modules/"
rm -f "$pkg/lib/modules/$kver"/modules.dep*	# a .deb has no indexes
printf 'Package: linux-image-bootci-test\nVersion: 1\nArchitecture: amd64\nMaintainer: bootci\nDescription: test\n' \
	>"$pkg/DEBIAN/control"
dpkg-deb -Zgzip -b "$pkg" "$work/kernel.deb" >/dev/null
tree=$work/tree
mkdir -p "$tree/arch/x86/boot" "$tree/include/config"
cp "$BUILD/kernel/vmlinuz" "$tree/arch/x86/boot/bzImage"
echo "$kver" >"$tree/include/config/kernel.release"

cat >"$work/small.conf" <<'CONF'
image = test
spec = small.spec
modules = ext4
cmdline = console=ttyS0
uki = no
CONF
printf 'file /init ${EXECUTOR} 0755 0 0\n' >"$work/small.spec"
"$builder" test-image --recipe "$work/small.conf" --kernel-deb "$work/kernel.deb" --out "$work/deb"
check "kernel from a .deb" test $? = 0
"$builder" test-image --recipe "$work/small.conf" --kernel-tree "$tree" --modules "$work/mods" --out "$work/tree-out"
check "kernel from a build tree + INSTALL_MOD_PATH" test $? = 0
"$builder" test-image --recipe "$work/small.conf" --vmlinuz "$BUILD/kernel/vmlinuz" --modules "$mods" --out "$work/vm"
check "kernel from vmlinuz + lib/modules/KVER" test $? = 0
check "the three forms give the same initrd.img" cmp "$work/deb/initrd.img" "$work/tree-out/initrd.img"
check "... byte for byte" cmp "$work/deb/initrd.img" "$work/vm/initrd.img"
check "ext4 and its dependencies are in" grep -q "lib/modules/$kver/kernel/fs/ext4/ext4.ko" <(names "$work/vm/initrd.img")
check "modules.dep made for the image" grep -q "lib/modules/$kver/modules.dep.bin" <(names "$work/vm/initrd.img")
check "boot.ipxe names the kernel and initrd" grep -qx 'kernel vmlinuz initrd=initrd.img console=ttyS0' "$work/vm/boot.ipxe"

# ---- manifest origins with a relative --out (as the Makefile gives it), twice from the same folder:
# the staged modules are named where they came from, never the vanished temporary folder.
relative_build() { # NAME KERNEL-ARGS...
	local name=$1
	shift
	(cd "$work" && "$builder" test-image --recipe small.conf "$@" --manifest "$name.manifest" --out "$name")
}
relative_build rel --vmlinuz vm/vmlinuz --modules mods && cp "$work/rel.manifest" "$work/rel.first"
check "relative --out: first build" test $? = 0
relative_build rel --vmlinuz vm/vmlinuz --modules mods
check "relative --out: second build" test $? = 0
check "relative --out: both manifests are identical" cmp "$work/rel.first" "$work/rel.manifest"
check "relative --out: no origin in a temporary folder" test "$(grep -c '\.tmp\.' "$work/rel.manifest")" = 0
realmods=$(realpath "$mods")
check "a staged module's origin is the kernel's modules folder" \
	grep -qE " initrd.img:/lib/modules/$kver/kernel/fs/ext4/ext4.ko $realmods/kernel/fs/ext4/ext4.ko\$" "$work/rel.manifest"
check "modules.dep.bin is labelled depmod" \
	grep -qE " initrd.img:/lib/modules/$kver/modules.dep.bin depmod\$" "$work/rel.manifest"
check "modules.order is the kernel's" \
	grep -qE " initrd.img:/lib/modules/$kver/modules.order $realmods/modules.order\$" "$work/rel.manifest"
check "vmlinuz's origin is absolute" grep -qE " vmlinuz $(realpath "$work/vm/vmlinuz")\$" "$work/rel.manifest"
relative_build rel-deb --kernel-deb kernel.deb
check "relative --out, kernel from a .deb" test $? = 0
check "a .deb's module is named inside the package" \
	grep -qE " initrd.img:/lib/modules/$kver/kernel/fs/ext4/ext4.ko $(realpath "$work/kernel.deb"):/lib/modules/$kver/kernel/fs/ext4/ext4.ko\$" \
	"$work/rel-deb.manifest"
check "... and no origin in a temporary folder" test "$(grep -c '\.tmp\.' "$work/rel-deb.manifest")" = 0

# ---- ELF closure and IGT
prefix=$work/igt
mkdir -p "$prefix/libexec/igt-gpu-tools" "$prefix/lib" "$prefix/share/igt-gpu-tools"
printf 'int bootci_answer(void) { return 42; }\n' >"$work/lib.c"
printf 'int bootci_answer(void);\nint main(void) { return bootci_answer() == 42 ? 0 : 1; }\n' >"$work/prog.c"
gcc -shared -fPIC -o "$prefix/lib/libbootcitest.so" "$work/lib.c"
# RUNPATH with $ORIGIN, as meson gives IGT's tests for libigt.so.
gcc -o "$prefix/libexec/igt-gpu-tools/uses_lib" "$work/prog.c" -L"$prefix/lib" -lbootcitest \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../lib'
cp "$BUILD/host/bin/fixtures/exit-with" "$prefix/libexec/igt-gpu-tools/"
printf 'igt@exit-with\nigt@uses_lib\n' >"$prefix/libexec/igt-gpu-tools/test-list.txt"
echo data >"$prefix/share/igt-gpu-tools/data.txt"
cat >"$work/igt.conf" <<'CONF'
image = test
spec = small.spec
# a dynamically linked program: libselinux -> libpcre2 is a transitive need
program = /usr/bin/ls /bin/ls
file = small.spec /etc/small.spec
uki = no
CONF
"$builder" test-image --recipe "$work/igt.conf" --vmlinuz "$BUILD/kernel/vmlinuz" --modules "$mods" \
	--igt "$prefix" --manifest "$work/igt.manifest" --out "$work/igt-out"
check "test image with an IGT install prefix" test $? = 0
list=$(names "$work/igt-out/initrd.img")
for want in usr/libexec/igt-gpu-tools/exit-with usr/libexec/igt-gpu-tools/uses_lib \
	usr/lib/libbootcitest.so etc/bootci/testlist usr/share/igt-gpu-tools/data.txt \
	lib64/ld-linux-x86-64.so.2 lib/x86_64-linux-gnu/libc.so.6 bin/ls \
	lib/x86_64-linux-gnu/libselinux.so.1 lib/x86_64-linux-gnu/libpcre2-8.so.0 etc/small.spec; do
	check "image holds /$want" grep -qx "$want" <<<"$list"
done
check "the testlist is IGT's" grep -q 'igt@uses_lib' <(zstd -dc "$work/igt-out/initrd.img" |
	(cd "$work" && mkdir -p un && cd un && cpio -id --quiet etc/bootci/testlist && cat etc/bootci/testlist))
check "manifest line for a library: sha256 size mode path origin" \
	grep -qE '^[0-9a-f]{64} [0-9]+ 100755 initrd.img:/usr/lib/libbootcitest.so '"$prefix"'/lib/libbootcitest.so$' "$work/igt.manifest"
check "manifest covers every initramfs entry" \
	test "$(grep -c ' initrd.img:/' "$work/igt.manifest")" = "$(wc -l <<<"$list")"

build=$work/igt-build
mkdir -p "$build/tests" "$build/lib"
cp "$prefix/libexec/igt-gpu-tools/exit-with" "$prefix/libexec/igt-gpu-tools/test-list.txt" "$build/tests/"
mkdir -p "$build/data" && echo png >"$build/data/pass.png"
printf 'igt@exit-with\n' >"$work/my-testlist"
"$builder" test-image --recipe "$work/igt.conf" --vmlinuz "$BUILD/kernel/vmlinuz" --modules "$mods" \
	--igt "$build" --testlist "$work/my-testlist" --out "$work/igt-build-out"
check "test image with an IGT build folder and --testlist" test $? = 0
check "build folder tests land in /usr/libexec/igt-gpu-tools" \
	grep -qx usr/libexec/igt-gpu-tools/exit-with <(names "$work/igt-build-out/initrd.img")
check "build folder data (meson copies it to data/) lands in /usr/share/igt-gpu-tools" \
	grep -qx usr/share/igt-gpu-tools/pass.png <(names "$work/igt-build-out/initrd.img")

# ---- the image runs the testlist it holds: its executor.conf says so (the last value of a key wins)
unpack_one() { # IMAGE PATH: prints the file PATH of IMAGE's initramfs
	rm -rf "$work/unpacked" && mkdir "$work/unpacked" &&
		(cd "$work/unpacked" && zstd -dc "$1" | cpio -id --quiet "$2" && cat "$2")
}
conf_value() { awk -F' *= *' -v key="$1" '$1 == key { value = $2 } END { print value }'; }
unpack_one "$work/igt-out/initrd.img" etc/bootci/executor.conf >"$work/made.conf"
check "no executor.conf in the spec: one is made that runs the testlist" \
	test "$(conf_value testlist <"$work/made.conf"):$(conf_value test_dir <"$work/made.conf")" = \
	/etc/bootci/testlist:/usr/libexec/igt-gpu-tools
check "... named bootci-builder in the manifest" \
	grep -qE ' 100644 initrd.img:/etc/bootci/executor.conf bootci-builder$' "$work/igt.manifest"
(cd "$SRC" && "$builder" test-image --recipe "$SRC/images/test-image.conf" --vmlinuz "$BUILD/kernel/vmlinuz" \
	--modules "$kroot" --igt "$build" --testlist "$work/my-testlist" --manifest "$work/real-igt.manifest" \
	--out "$work/real-igt")
check "the real test recipe with IGT and --testlist" test $? = 0
unpack_one "$work/real-igt/initrd.img" etc/bootci/executor.conf >"$work/real.conf"
check "the recipe's executor.conf is kept" \
	test "$(head -n "$(wc -l <"$EXECUTOR_CONF")" "$work/real.conf")" = "$(cat "$EXECUTOR_CONF")"
check "... and now runs the testlist from where IGT landed" \
	test "$(conf_value testlist <"$work/real.conf"):$(conf_value test_dir <"$work/real.conf")" = \
	/etc/bootci/testlist:/usr/libexec/igt-gpu-tools
check "... which holds the given testlist" \
	test "$(unpack_one "$work/real-igt/initrd.img" etc/bootci/testlist)" = igt@exit-with
check "... its manifest origin names the recipe's file and the builder" \
	grep -qE " initrd.img:/etc/bootci/executor.conf $EXECUTOR_CONF\+bootci-builder\$" "$work/real-igt.manifest"
(cd "$SRC" && "$builder" test-image --recipe "$SRC/images/test-image.conf" --vmlinuz "$BUILD/kernel/vmlinuz" \
	--modules "$kroot" --out "$work/real-plain")
check "without IGT or a testlist, executor.conf is the recipe's as it is" \
	test "$(unpack_one "$work/real-plain/initrd.img" etc/bootci/executor.conf)" = "$(cat "$EXECUTOR_CONF")"

# ---- reproducible: the real recipes twice, sources touched in between.
# From $SRC, as make runs it: initramfs/test.spec names some sources relative to it.
build_all() { # OUTDIR
	(cd "$SRC" && "$builder" test-image --recipe "$SRC/images/test-image.conf" \
		--vmlinuz "$BUILD/kernel/vmlinuz" --modules "$kroot" --manifest "$1/test.manifest" --out "$1/test" &&
	"$builder" known-good --recipe "$SRC/images/known-good.conf" \
		--vmlinuz "$BUILD/kernel/vmlinuz" --modules "$kroot" --manifest "$1/kg.manifest" --out "$1/kg")
}
mkdir -p "$work/one" "$work/two/sub"
build_all "$work/one"
check "first build of both recipes" test $? = 0
# bootci-collect is static musl: nothing comes with it, so the known-good image holds no shared
# library at all: neither glibc (its loader, libc.so.6) nor the master's (libpq, libmicrohttpd,
# SQLite).
kg_list=$(names "$work/one/kg/initrd.img")
check "the known-good image holds bootci-collect" grep -qx usr/bin/bootci-collect <<<"$kg_list"
unpack_one "$work/one/kg/initrd.img" usr/bin/bootci-collect >"$work/kg-collect"
check "... static musl: no interpreter, no DT_NEEDED, not glibc's start-up code" \
	bash -c '"$1" "$2" >/dev/null' _ "$SRC/tests/check-static.sh" "$work/kg-collect"
check "the known-good image carries no glibc (no ld-linux-*.so.*, no libc.so.6)" \
	bash -c '! grep -qE "(^|/)(ld-linux[^/]*\.so[.0-9]*|libc\.so\.6)$" <<<"$1"' _ "$kg_list"
check "... and no shared library at all" bash -c '! grep -qE "\.so(\.[0-9]+)*$" <<<"$1"' _ "$kg_list"
for lib in libpq.so.5 libmicrohttpd.so.12 libsqlite3.so.0; do
	check "the known-good image does without $lib (the master's)" bash -c '! grep -q "/$1\$" <<<"$2"' _ "$lib" "$kg_list"
done
sleep 1.1
cp "$EXECUTOR" "$work/executor" && touch "$work/executor"
EXECUTOR=$work/executor build_all "$work/two/sub"
check "second build (touched executor copy)" test $? = 0
for f in test/vmlinuz test/initrd.img test/boot.ipxe test/bootci.efi \
	kg/disk.img kg/known-good.efi kg/initrd.img kg/register-boot-entry.sh kg/layout; do
	check "$f is byte-identical" cmp "$work/one/$f" "$work/two/sub/$f"
done
same_manifests() {
	[ -s "$work/one/test.manifest" ] &&
		cmp <(sed "s|$EXECUTOR|EXE|" "$work/one/test.manifest") <(sed "s|$work/executor|EXE|" "$work/two/sub/test.manifest")
}
check "test manifests equal but for the executor's origin" same_manifests
# Every module an image's executor.conf names is in that image (a missing one stops the executor),
# and the known-good executor loads every driver its recipe packs (its partition may be on any).
for image in test kg; do
	rm -rf "$work/$image-root" && mkdir "$work/$image-root"
	(cd "$work/$image-root" && zstd -dc "$work/one/$image/initrd.img" | cpio -id --quiet 2>/dev/null)
	configured=$(sed -n 's/^modules *= *//p' "$work/$image-root/etc/bootci/executor.conf" | tr ',' ' ')
	missing=
	for m in $configured; do
		modprobe -d "$work/$image-root" -S "$kver" --show-depends "$m" >/dev/null 2>&1 || missing="$missing $m"
	done
	check "$image image: the modules its executor loads ($configured) are all in it${missing:+; missing:$missing}" \
		test -n "$configured" -a -z "$missing"
done
unloaded=
for m in $(sed -n 's/^modules *= *//p' "$SRC/images/known-good.conf"); do
	grep -qE "^(modules|pstore_backends)=(.*,)?$m(,|\$)" "$SRC/images/known-good-executor.conf" ||
		unloaded="$unloaded $m"
done
check "the known-good executor loads every module known-good.conf packs${unloaded:+; not:$unloaded}" test -z "$unloaded"
check "the UKI's PE time stamp is SOURCE_DATE_EPOCH" \
	test "$(od -An -tu4 -j $(( $(od -An -tu4 -j60 -N4 "$work/one/test/bootci.efi") + 8 )) -N4 "$work/one/test/bootci.efi" | tr -d ' ')" = 1700000000
check "the UKI has the four sections" \
	test "$(objdump -h "$work/one/test/bootci.efi" | grep -cE ' \.(osrel|cmdline|linux|initrd) ')" = 4
check "the ESP holds \\EFI\\BOOT\\BOOTX64.EFI and \\EFI\\bootci\\known-good.efi" \
	bash -c "mdir -b -i '$work/one/kg/disk.img@@1M' ::/EFI/BOOT ::/EFI/bootci | grep -c -e BOOTX64.EFI -e known-good.efi | grep -qx 2"
start=$(awk '$1 == "results" { print $2 }' "$work/one/kg/layout")
dd if="$work/one/kg/disk.img" of="$work/results.head" bs=1M skip=$((start / 1048576)) count=2 status=none
check "results partition is ext4 labelled BOOTCI-RESULTS" \
	test "$(blkid -p -o value -s TYPE "$work/results.head"):$(blkid -p -o value -s LABEL "$work/results.head")" = ext4:BOOTCI-RESULTS

# ---- register-boot-entry.sh against a fake efibootmgr: it keeps Boot#### entries and BootOrder
# in files, prints them as efibootmgr does and logs every call. The entry must land at the END of
# BootOrder (network first), be created with --create-only (never --create, which puts it first)
# and be reused, not duplicated, when the script runs again.
efi=$work/efi
mkdir -p "$efi/bin"
cat >"$efi/bin/efibootmgr" <<'FAKE'
#!/bin/sh
state=${FAKE_EFI:?}
printf '%s\n' "$*" >>"$state/calls"
case "${1:-}" in
--create-only)
	n=$(printf '%04X' "$(wc -l <"$state/entries")")
	while [ $# -gt 0 ]; do [ "$1" = --label ] && label=$2; shift; done
	printf 'Boot%s* %s\tHD(1,GPT)/File(\\EFI\\bootci\\known-good.efi)\n' "$n" "$label" >>"$state/entries" ;;
--bootorder) echo "$2" >"$state/order" ;;
"") ;;
*) echo "fake efibootmgr: unexpected $*" >&2; exit 1 ;;
esac
echo "BootCurrent: 0001"
echo "BootOrder: $(cat "$state/order")"
cat "$state/entries"
FAKE
chmod +x "$efi/bin/efibootmgr"
register() { FAKE_EFI=$efi PATH=$efi/bin:$PATH sh "$work/one/kg/register-boot-entry.sh" /dev/sdz >"$efi/out" 2>&1; }
printf 'Boot0000* UiApp\nBoot0001* UEFI PXEv4 (MAC:525400123456)\nBoot0002  bootci-known-good-old\n' >"$efi/entries"
echo 0001,0000 >"$efi/order"
: >"$efi/calls"
register
status=$?
check "register-boot-entry.sh succeeds" test "$status" = 0 || diag <"$efi/out"
check "the entry is made with --create-only, on partition 1 of the disk, with the UKI as loader" \
	grep -qxF -- '--create-only --disk /dev/sdz --part 1 --label bootci-known-good --loader \EFI\bootci\known-good.efi' "$efi/calls"
check "never with --create or -c (which would put it first)" test "$(grep -cE -- '(^| )(--create|-c)( |$)' "$efi/calls")" = 0
check "the new entry goes at the end of BootOrder" test "$(cat "$efi/order")" = 0001,0000,0003
register
check "run again: succeeds" test $? = 0
check "run again: no second entry" test "$(grep -c " bootci-known-good"$'\t' "$efi/entries")" = 1
check "run again: BootOrder unchanged" test "$(cat "$efi/order")" = 0001,0000,0003
echo 0001 >"$efi/order"
register
check "an existing entry missing from BootOrder is appended, not made again" \
	test "$(cat "$efi/order"):$(grep -c -- --create-only "$efi/calls")" = 0001,0003:1
: >"$efi/order"
register
check "an empty BootOrder becomes the entry alone" test "$(cat "$efi/order")" = 0003

done_testing

#!/usr/bin/env bash
# bootci-builder test-image closures: the firmware the modules name (plain or
# compressed; a missing one is a warning naming it and its module), the
# modules a device modalias pulls in (checked against kmod's modprobe on the
# same tree), and the libraries of a program found the way ld.so finds them:
# DT_RPATH is inherited by the libraries a program loads, DT_RUNPATH is not,
# and an object with DT_RUNPATH ignores the DT_RPATH it would inherit (each
# case checked against the host's ld.so running the same programs).
set -uo pipefail
# shellcheck source=tests/builder/kernel-setup.sh
. "$SRC/tests/builder/kernel-setup.sh"
export SOURCE_DATE_EPOCH=1700000000 EXECUTOR=$BUILD/musl/bin/bootci-executor

names() { zstd -dc "$1" | cpio -it --quiet; }
printf 'file /init ${EXECUTOR} 0755 0 0\n' >"$work/small.spec"
build() { # OUT RECIPE-LINES...: builds $work/OUT from a recipe of small.spec and the lines
	local out=$1
	shift
	printf 'image = test\nspec = small.spec\nuki = no\n' >"$work/$out.conf"
	printf '%s\n' "$@" >>"$work/$out.conf"
	"$builder" test-image --recipe "$work/$out.conf" --vmlinuz "$BUILD/kernel/vmlinuz" --modules "$kroot" \
		--out "$work/$out" >"$work/$out.stdout" 2>"$work/$out.stderr"
}

# ---- firmware: e100 asks for e100/d101m_ucode.bin, d101s_ucode.bin and d102e_ucode.bin
mkdir -p "$work/fw/e100"
echo m >"$work/fw/e100/d101m_ucode.bin"
echo s | zstd -q >"$work/fw/e100/d101s_ucode.bin.zst"
build firmware 'modules = e100' 'firmware_dir = fw'
check "an image with e100 and a firmware folder lacking one of its files builds" test $? = 0
list=$(names "$work/firmware/initrd.img")
check "e100's firmware is copied" grep -qx lib/firmware/e100/d101m_ucode.bin <<<"$list"
check "a compressed firmware file is found and kept compressed" grep -qx lib/firmware/e100/d101s_ucode.bin.zst <<<"$list"
check "the missing firmware is a warning naming it and its module" \
	grep -qx "bootci-builder: warning: firmware 'e100/d102e_ucode.bin' of module 'e100' not found" \
	"$work/firmware.stderr"
check "only the missing one is warned about" test "$(grep -c warning "$work/firmware.stderr")" = 1
check "nothing else lands in /lib/firmware" test "$(grep -c '^lib/firmware/.*ucode' <<<"$list")" = 2

# ---- modalias: QEMU's standard VGA (bochs) pulls bochs.ko and its DRM helpers, as modprobe would
alias=pci:v00001234d00001111sv00001AF4sd00001100bc03sc00i00
build modalias "modalias = $alias"
check "an image with the bochs modalias builds" test $? = 0
expected=$(modprobe -d "$kroot" -S "$kver" --show-depends "$alias" | sed -n "s|^insmod $kroot/\([^ ]*\).*|\1|p" | sort -u)
got=$(names "$work/modalias/initrd.img" | grep '\.ko' | sort)
check "modprobe resolves the modalias to bochs (the oracle works)" grep -q 'tiny/bochs.ko$' <<<"$expected"
check "the image holds exactly modprobe's modules for it" test "$expected" = "$got"
build no-driver 'modalias = pci:v0000FFFFd0000FFFFsv00000000sd00000000bc12sc34i56'
status=$?
check "a modalias no driver claims is fine and adds nothing" \
	test "$status:$(names "$work/no-driver/initrd.img" | grep -c '\.ko')" = 0:0

# ---- ELF: DT_RPATH is inherited, DT_RUNPATH is not
elf=$work/elf
mkdir -p "$elf/bin" "$elf/la" "$elf/lb" "$elf/la-runpath"
printf 'int b(void) { return 42; }\n' >"$elf/b.c"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$elf/a.c"
printf 'int a(void);\nint main(void) { return a() == 42 ? 0 : 1; }\n' >"$elf/main.c"
gcc -shared -fPIC -o "$elf/lb/libb.so" "$elf/b.c" &&
	gcc -shared -fPIC -o "$elf/la/liba.so" "$elf/a.c" -L"$elf/lb" -lb &&
	gcc -shared -fPIC -o "$elf/la-runpath/liba.so" "$elf/a.c" -L"$elf/lb" -lb \
		-Wl,--enable-new-dtags,-rpath,/nonexistent &&
	gcc -o "$elf/bin/rpath" "$elf/main.c" -L"$elf/la" -la -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../la:$ORIGIN/../lb' &&
	gcc -o "$elf/bin/runpath" "$elf/main.c" -L"$elf/la" -la -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../la:$ORIGIN/../lb' &&
	gcc -o "$elf/bin/rpath-to-runpath" "$elf/main.c" -L"$elf/la-runpath" -la -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../la-runpath:$ORIGIN/../lb'
check "test programs built" test $? = 0
check "the programs have the dynamic tags meant" \
	test "$(readelf -d "$elf/bin/rpath" | grep -c '(RPATH)'):$(readelf -d "$elf/bin/runpath" | grep -c '(RUNPATH)'):$(readelf -d "$elf/la-runpath/liba.so" | grep -c '(RUNPATH)')" = 1:1:1

# ld.so, the oracle: what runs, and what cannot find libb.so.
env -u LD_LIBRARY_PATH "$elf/bin/rpath"
check "ld.so: libb.so found through the program's DT_RPATH, inherited by liba.so" test $? = 0
env -u LD_LIBRARY_PATH "$elf/bin/runpath" 2>"$work/ldso.err"
check "ld.so: the program's DT_RUNPATH does not serve liba.so's needs" grep -q 'libb.so: cannot open' "$work/ldso.err"
env -u LD_LIBRARY_PATH "$elf/bin/rpath-to-runpath" 2>"$work/ldso2.err"
check "ld.so: liba.so with a DT_RUNPATH ignores the DT_RPATH it would inherit" grep -q 'libb.so: cannot open' "$work/ldso2.err"

# The builder, on the same programs.
build rpath "program = $elf/bin/rpath /opt/t/bin/rpath"
check "builder: the DT_RPATH program builds" test $? = 0
list=$(names "$work/rpath/initrd.img")
check "builder: liba.so and libb.so land where \$ORIGIN puts them" \
	test "$(grep -cxE 'opt/t/(la/liba|lb/libb)\.so' <<<"$list")" = 2
build runpath "program = $elf/bin/runpath /opt/t/bin/runpath"
status=$?
check "builder: the DT_RUNPATH program is refused, naming libb.so and liba.so" \
	test "$status:$(grep -c "unresolved library 'libb.so' needed by /opt/t/la/liba.so" "$work/runpath.stderr")" = 1:1
build rpath-to-runpath "program = $elf/bin/rpath-to-runpath /opt/t/bin/rpath-to-runpath"
status=$?
check "builder: liba.so's own DT_RUNPATH hides the inherited DT_RPATH" \
	test "$status:$(grep -c "unresolved library 'libb.so' needed by /opt/t/la-runpath/liba.so" "$work/rpath-to-runpath.stderr")" = 1:1

# ---- a sysroot laid out as Debian's: the loader's standard dirs, and its interpreter symlink
sysroot=$work/sysroot
mkdir -p "$sysroot/lib/x86_64-linux-gnu" "$sysroot/lib64" "$sysroot/usr/lib64" "$sysroot/usr/lib"
cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$sysroot/lib/x86_64-linux-gnu/"
ln -s /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$sysroot/lib64/ld-linux-x86-64.so.2"
gcc -o "$elf/bin/plain" "$elf/main.c" -L"$elf/la" -la -Wl,-rpath-link,"$elf/lb" &&
	cp "$elf/la/liba.so" "$sysroot/usr/lib64/" && cp "$elf/lb/libb.so" "$sysroot/usr/lib/"
check "sysroot made" test $? = 0
sysroot_build() { # OUT
	printf 'image = test\nspec = small.spec\nuki = no\nprogram = %s /usr/bin/plain\n' "$elf/bin/plain" >"$work/$1.conf"
	"$builder" test-image --recipe "$work/$1.conf" --vmlinuz "$BUILD/kernel/vmlinuz" --modules "$kroot" \
		--sysroot "$sysroot" --out "$work/$1" >"$work/$1.stdout" 2>"$work/$1.stderr"
}
check "ld.so: /usr/lib64 is not a standard dir of Debian's loader" \
	test "$(/lib64/ld-linux-x86-64.so.2 --help | grep -c 'lib64 (system search path)')" = 0
sysroot_build lib64
check "builder: a library only in /usr/lib64 is not found, as ld.so would not" \
	grep -q "unresolved library 'liba.so' needed by /usr/bin/plain" "$work/lib64.stderr"
mv "$sysroot/usr/lib64/liba.so" "$sysroot/usr/lib/"
sysroot_build usrlib
check "builder: in /usr/lib it is found" test $? = 0
listing=$(zstd -dc "$work/usrlib/initrd.img" | cpio -itv --quiet)
check "the interpreter is a symlink, as in the sysroot" \
	grep -qE '^l.* lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2$' <<<"$listing"
check "the loader is in the image once" test "$(grep -c '^-.*ld-linux-x86-64.so.2$' <<<"$listing")" = 1
check "libraries in /usr/lib stay there" \
	test "$(grep -cE '^-.* usr/lib/lib[ab].so$' <<<"$listing")" = 2

# ---- a script brings its "#!" interpreter, or names it when there is none to bring
printf '#!/bin/sh\necho hi\n' >"$elf/sh-script"
printf '#! /usr/bin/plain -x\n' >"$elf/plain-script"
printf '#!/no/such/interpreter\n' >"$elf/lost-script"
printf '#!bash\n' >"$elf/relative-script"
chmod +x "$elf"/*-script
printf 'file /init ${EXECUTOR} 0755 0 0\nslink /bin/sh busybox 0777 0 0\n' >"$work/sh.spec"
mkdir -p "$sysroot/usr/bin" && cp "$elf/bin/plain" "$sysroot/usr/bin/"
script_build() { # OUT SCRIPT
	printf 'image = test\nspec = sh.spec\nuki = no\nprogram = %s /usr/bin/%s\n' "$elf/$2" "$2" >"$work/$1.conf"
	"$builder" test-image --recipe "$work/$1.conf" --vmlinuz "$BUILD/kernel/vmlinuz" --modules "$kroot" \
		--sysroot "$sysroot" --out "$work/$1" >"$work/$1.stdout" 2>"$work/$1.stderr"
}
script_build sh sh-script
status=$?
check "a #!/bin/sh script uses the image's own /bin/sh" \
	test "$status:$(zstd -dc "$work/sh/initrd.img" | cpio -itv --quiet | grep -c ' bin/sh -> busybox$')" = 0:1 ||
	diag <"$work/sh.stderr"
script_build plain plain-script
check "a script whose interpreter is not in the image gets it from the sysroot" test $? = 0
list=$(names "$work/plain/initrd.img")
check "... with the interpreter's own libraries" \
	test "$(grep -cxE 'usr/bin/plain|usr/lib/lib[ab].so|lib/x86_64-linux-gnu/libc.so.6' <<<"$list")" = 4
script_build lost lost-script
check "a script whose interpreter is nowhere is refused, naming it" \
	grep -q "script /usr/bin/lost-script: its interpreter /no/such/interpreter is neither in the image nor in the sysroot" \
	"$work/lost.stderr"
script_build relative relative-script
check "a script with a relative interpreter is refused, naming it" \
	grep -q "script /usr/bin/relative-script ($elf/relative-script): interpreter 'bash' is not an absolute path" \
	"$work/relative.stderr"

done_testing

#!/usr/bin/env bash
# Every bad input makes bootci-builder exit non-zero with SPECFILE:LINE (or the
# culprit's name) in the message, and leaves no output and no temporary behind.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
builder=$BUILD/host/bin/bootci-builder
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'x\n' >"$work/source"

# bad NAME LINE WHAT SPEC-TEXT: the build must fail at bad.spec:LINE saying WHAT.
bad() {
	local name=$1 line=$2 what=$3 text=$4 out=$work/out status
	rm -rf "$out" && mkdir "$out"
	printf '%s\n' "$text" >"$work/bad.spec"
	(cd "$work" && SRC_DIR=$work "$builder" initramfs bad.spec out/image.img) 2>"$work/stderr"
	status=$?
	if [ "$status" = 0 ]; then
		not_ok "$name: accepted"
	elif ! grep -qF "bad.spec:$line: $what" "$work/stderr"; then
		not_ok "$name: message '$(cat "$work/stderr")' lacks 'bad.spec:$line: $what'"
	elif [ -n "$(ls -A "$out")" ]; then
		not_ok "$name: left $(ls -A "$out")"
	else
		ok "$name: exit $status, bad.spec:$line named, nothing left"
	fi
}

unset NOT_SET_ANYWHERE
bad "unknown directive" 2 "unknown directive 'fil'" $'dir /a 0755 0 0\nfil /a/x ${SRC_DIR}/source 0644 0 0'
bad "wrong field count" 3 "dir: expected 4 fields, got 3" $'# c\n\ndir /a 0755 0'
bad "bad mode" 1 "bad mode '0955'" 'dir /a 0955 0 0'
bad "unset variable" 2 "variable 'NOT_SET_ANYWHERE' is not set" $'\nfile /x ${NOT_SET_ANYWHERE}/y 0644 0 0'
bad "missing source file" 2 "cannot open '$work/nope'" $'dir /a 0755 0 0\nfile /a/x ${SRC_DIR}/nope 0644 0 0'
bad "duplicate path" 3 "duplicate path '/a'" $'dir /a 0755 0 0\nfile /b ${SRC_DIR}/source 0644 0 0\ndir /a/ 0700 0 0'
bad "bad device type" 1 "bad device type 'z'" 'nod /dev/x 0600 0 0 z 1 1'

# A failed build leaves an existing image untouched.
printf 'old image\n' >"$work/keep.img"
printf 'dir /a 0755 0 0\nbogus\n' >"$work/bad.spec"
"$builder" initramfs "$work/bad.spec" "$work/keep.img" 2>/dev/null
if [ $? != 0 ] && [ "$(cat "$work/keep.img")" = 'old image' ] &&
   [ -z "$(find "$work" -name 'keep.img.tmp*')" ]; then
	ok "failed build keeps the previous image and leaves no temporary"
else
	not_ok "failed build damaged the previous image or left a temporary"
fi

printf 'dir /a 0755 0 0\n' >"$work/good.spec"
SOURCE_DATE_EPOCH=yesterday "$builder" initramfs "$work/good.spec" "$work/epoch.img" 2>"$work/stderr"
if [ $? != 0 ] && grep -q SOURCE_DATE_EPOCH "$work/stderr" && [ ! -e "$work/epoch.img" ]; then
	ok "non-numeric SOURCE_DATE_EPOCH is refused"
else
	not_ok "non-numeric SOURCE_DATE_EPOCH was not refused"
fi

"$builder" initramfs "$work/good.spec" 2>/dev/null
if [ $? = 2 ]; then ok "missing OUT is a usage error"; else not_ok "missing OUT not a usage error"; fi

# Unknown module: needs the unpacked kernel (make kernel).
release_file=$BUILD/kernel/release
if [ ! -f "$release_file" ]; then
	skip "no kernel tree under $BUILD/kernel"
else
	kver=$(cat "$release_file")
	mkdir -p "$work/staging"
	touch "$work/staging/previous"
	"$builder" modules --moddir "$BUILD/kernel/root" --kver "$kver" --out "$work/staging" \
		ext4 no_such_module_xyz >"$work/stdout" 2>"$work/stderr"
	status=$?
	if [ "$status" != 0 ] && grep -q "unknown module 'no_such_module_xyz'" "$work/stderr" &&
	   [ -e "$work/staging/previous" ] && [ ! -e "$work/staging.tmp" ] &&
	   [ -z "$(ls -A "$work/staging" | grep -v previous)" ]; then
		ok "unknown module: exit $status, named, staging untouched, no staging.tmp"
	else
		not_ok "unknown module: status $status, stderr '$(cat "$work/stderr")', staging: $(ls -A "$work" | tr '\n' ' ')"
	fi

	"$builder" modules --moddir "$BUILD/kernel/root" --kver "$kver" --out "$work/staging2" \
		--depmod /bin/false ext4 >/dev/null 2>"$work/stderr"
	status=$?
	if [ "$status" != 0 ] && grep -q 'failed with exit status 1' "$work/stderr" &&
	   [ ! -e "$work/staging2" ] && [ ! -e "$work/staging2.tmp" ]; then
		ok "failing depmod: exit $status, reported, nothing staged"
	else
		not_ok "failing depmod: status $status, stderr '$(cat "$work/stderr")'"
	fi
fi

done_testing

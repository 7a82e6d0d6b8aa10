#!/usr/bin/env bash
# bootci-efi set-bootnext and delete-bootnext (bootci-efi(8)) on a fake
# efivarfs under --root: entries written here by hand as the UEFI spec lays out
# an EFI_LOAD_OPTION (not by our own writer), BootNext read back as bytes.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
efi=$BUILD/host/bin/bootci-efi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
guid=8be4df61-93ca-11d2-aa0d-00e098032b8c	# EFI_GLOBAL_VARIABLE
vars=$work/root/sys/firmware/efi/efivars
mkdir -p "$vars"

# load_option NUMBER DESCRIPTION: Boot#### = attributes (NV|BS|RT), then the load option:
# LOAD_OPTION_ACTIVE, FilePathListLength, the UTF-16LE description with its NUL, and a device
# path of one End node (7f ff 04 00)
load_option() {
	python3 - "$vars/Boot$1-$guid" "$2" <<'PY'
import struct, sys
desc = (sys.argv[2] + '\0').encode('utf-16-le')
path = bytes([0x7f, 0xff, 0x04, 0x00])
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<I', 7) + struct.pack('<IH', 1, len(path)) + desc + path)
PY
}
load_option 0000 "UiApp"
load_option 0001 "UEFI PXEv4 (MAC:525400123456)"
load_option 0003 "bootci-known-good"
printf '\x07\x00\x00\x00\x01\x00\x00\x00' >"$vars/BootOrder-$guid"
bootnext=$vars/BootNext-$guid
hex() { od -An -tx1 "$1" | tr -d ' \n'; }

plan 14
out=$("$efi" --root "$work/root" set-bootnext bootci-known-good 2>&1)
check "set-bootnext by description succeeds" test $? = 0 || diag <<<"$out"
check "... and says which entry" test "$out" = "BootNext: Boot0003"
check "BootNext is NV|BS|RT and the entry number, little-endian" test "$(hex "$bootnext")" = 070000000300
"$efi" --root "$work/root" set-bootnext Boot0001 >/dev/null 2>&1
check "set-bootnext Boot0001" test "$?:$(hex "$bootnext")" = 0:070000000100
"$efi" --root "$work/root" set-bootnext 0 >/dev/null 2>&1
check "set-bootnext 0 (a hex number)" test "$?:$(hex "$bootnext")" = 0:070000000000
out=$("$efi" --root "$work/root" set-bootnext no-such-entry 2>&1)
status=$?
check "set-bootnext of an unknown entry fails with 1, naming it" \
	test "$status:$out" = "1:bootci-efi: no boot entry 'no-such-entry' (bootci-efi list shows them)"
check "... and leaves BootNext as it was" test "$(hex "$bootnext")" = 070000000000
"$efi" --root "$work/root" set-bootnext 2 >/dev/null 2>&1
check "set-bootnext of a number with no Boot#### fails" test $? = 1
check "BootOrder is never touched" test "$(hex "$vars/BootOrder-$guid")" = 0700000001000000
out=$("$efi" --root "$work/root" delete-bootnext 2>&1)
status=$?
check "delete-bootnext succeeds and says so" test "$status:$out" = "0:BootNext: absent"
check "... and BootNext is gone" test ! -e "$bootnext"
out=$("$efi" --root "$work/root" delete-bootnext 2>&1)
check "delete-bootnext without a BootNext is fine" test "$?:$out" = "0:BootNext: absent"
"$efi" --root "$work/no-efi" set-bootnext 0 >/dev/null 2>&1
check "without efivarfs: set-bootnext fails with 1" test $? = 1
"$efi" --root "$work/root" set-bootnext >/dev/null 2>&1
check "set-bootnext without an entry is a usage error (2)" test $? = 2

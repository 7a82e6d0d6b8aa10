#!/usr/bin/env bash
# bootci-builder initramfs is reproducible: the same spec built twice, with the
# sources touched in between, from another directory and with the spec lines in
# another order, gives the same bytes for every compression; and the archive
# (read back by GNU cpio, not by libarchive) holds the expected names in order.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
builder=$BUILD/host/bin/bootci-builder
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/cwd1" "$work/cwd2"
printf 'hello\n' >"$work/src/hello"
head -c 200000 /dev/urandom >"$work/src/blob"
printf '#!/bin/sh\n' >"$work/src/tool"

cat >"$work/image.spec" <<'SPEC'
# a little of everything, including parents left for the builder to add
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
file /init ${REPRO_SRC}/tool 0755 0 0
file /usr/bin/tool ${REPRO_SRC}/tool 0755 0 0 /usr/bin/tool-link /bin/tool
file /usr/share/blob ${REPRO_SRC}/blob 0644 1000 1000
file /etc/motd ${REPRO_SRC}/hello 0644 0 0
slink /bin/sh tool 0777 0 0
pipe /run/fifo 0600 0 0
dir /tmp 1777 0 0
SPEC
# The same lines in reverse order.
{ head -n1 "$work/image.spec"; tail -n +2 "$work/image.spec" | tac; } >"$work/reversed.spec"

expected_names='bin
bin/sh
bin/tool
dev
dev/console
etc
etc/motd
init
run
run/fifo
tmp
usr
usr/bin
usr/bin/tool
usr/bin/tool-link
usr/share
usr/share/blob'

export REPRO_SRC=$work/src
unset SOURCE_DATE_EPOCH
for c in zstd xz gzip; do
	(cd "$work/cwd1" && "$builder" initramfs --compress "$c" ../image.spec "$work/one.$c")
	check "$c: first build succeeds" test $? = 0
done

# New mtimes and contents rewritten in place, at least a second later.
sleep 1.1
touch -d '2001-02-03 04:05:06' "$work/src/hello" "$work/src/blob"
touch "$work/src/tool"
cp "$work/src/hello" "$work/src/hello.tmp" && mv "$work/src/hello.tmp" "$work/src/hello"

for c in zstd xz gzip; do
	(cd "$work/cwd2" && "$builder" initramfs --compress "$c" "$work/reversed.spec" out.$c)
	check "$c: second build (other cwd, other line order) succeeds" test $? = 0
	check "$c: both builds are byte-identical" cmp "$work/one.$c" "$work/cwd2/out.$c"
done

names() { "$1" -dc "$2" | cpio -it --quiet; }
check "zstd: cpio lists the expected names in sorted order" \
	test "$(names zstd "$work/one.zstd")" = "$expected_names"
check "xz: cpio lists the expected names in sorted order" \
	test "$(names xz "$work/one.xz")" = "$expected_names"
check "gzip: cpio lists the expected names in sorted order" \
	test "$(names gzip "$work/one.gzip")" = "$expected_names"
check "listing is in C-locale order" test "$(names zstd "$work/one.zstd" | LC_ALL=C sort)" = "$expected_names"

# The hard links unpack to one file carrying the data.
mkdir "$work/unpacked"
(cd "$work/unpacked" && zstd -dc "$work/one.zstd" | cpio -id --quiet --no-absolute-filenames 2>/dev/null)
check "hard links unpack as one inode with the data" \
	test "$(stat -c %i "$work/unpacked/usr/bin/tool")" = "$(stat -c %i "$work/unpacked/bin/tool")" -a \
	"$(cat "$work/unpacked/usr/bin/tool-link")" = '#!/bin/sh'
check "file contents survive" cmp "$work/src/blob" "$work/unpacked/usr/share/blob"

# Nothing from the build host or clock leaks into the headers.
listing=$(zstd -dc "$work/one.zstd" | TZ=UTC cpio -itv --quiet --numeric-uid-gid)
check "every mtime is 0 without SOURCE_DATE_EPOCH" \
	test "$(echo "$listing" | grep -vc 'Jan  1  1970')" = 0
check "uid/gid come from the spec" \
	grep -qE '^-rw-r--r-- +1 1000 +1000 .* usr/share/blob$' <<<"$listing"
check "gzip header carries no timestamp" \
	test "$(od -An -tx1 -j4 -N4 "$work/one.gzip" | tr -d ' ')" = 00000000
check "xz uses the CRC32 check the kernel's decoder needs" \
	grep -q CRC32 < <(xz --robot -lv "$work/one.xz")

SOURCE_DATE_EPOCH=1700000000 "$builder" initramfs --compress none "$work/image.spec" "$work/epoch.cpio"
check "SOURCE_DATE_EPOCH sets every mtime" \
	test "$(TZ=UTC cpio -itv --quiet <"$work/epoch.cpio" | grep -vc 'Nov 14  2023')" = 0

done_testing

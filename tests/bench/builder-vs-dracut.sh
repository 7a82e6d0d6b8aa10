#!/usr/bin/env bash
# Bench: bootci-builder against Debian's dracut for the same kernel and the
# same drivers (the test image's module list), both zstd-compressed; prints
# the time and compressed-size ratios and the executor's size. dracut-core is
# installed with apt-get only when it is absent (never by make check).
#
# usage: tests/bench/builder-vs-dracut.sh [BUILD_DIR] [RUNS]     (make bench runs it)
set -euo pipefail
build=$(realpath "${1:-build}")
runs=${2:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
builder=$build/host/bin/bootci-builder
kver=$(cat "$build/kernel/release")
kroot=$build/kernel/root
executor=$build/musl/bin/bootci-executor
# The module list of images/test-image.conf `modules =` lines.
drivers=$(sed -n 's/^modules *= *//p' "$src/images/test-image.conf" | tr '\n' ' ')

if ! command -v dracut >/dev/null 2>&1; then
	echo "bench: installing dracut-core (apt-get)" >&2
	sudo_cmd=()
	if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
	"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends dracut-core >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Only what both get: the executor as /init and the drivers with their closure.
printf 'file /init %s 0755 0 0\n' "$executor" >"$work/bench.spec"
printf 'image = test\nspec = bench.spec\nmodules = %s\nuki = no\n' "$drivers" >"$work/bench.conf"

now() { date +%s.%N; }
best() { sort -n | head -n1; }

for _ in $(seq "$runs"); do
	t0=$(now)
	SOURCE_DATE_EPOCH=0 "$builder" test-image --recipe "$work/bench.conf" \
		--vmlinuz "$build/kernel/vmlinuz" --modules "$kroot" --out "$work/builder" >/dev/null
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$work/builder.times"
done
for _ in $(seq "$runs"); do
	t0=$(now)
	# --no-hostonly: a generic image; --drivers: the same drivers; --kmoddir: the kernel under test.
	dracut --quiet --force --no-hostonly --no-hostonly-cmdline --zstd --kver "$kver" \
		--kmoddir "$kroot/lib/modules/$kver" --drivers "$drivers" "$work/dracut.img" "$kver" 2>"$work/dracut.log" ||
		{ cat "$work/dracut.log" >&2; exit 1; }
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$work/dracut.times"
done

tb=$(best <"$work/builder.times")
td=$(best <"$work/dracut.times")
sb=$(stat -c %s "$work/builder/initrd.img")
sd=$(stat -c %s "$work/dracut.img")
nb=$(zstd -dc "$work/builder/initrd.img" | cpio -it --quiet | grep -c '\.ko' || true)
nd=$( (zstd -dc "$work/dracut.img" 2>/dev/null || cat "$work/dracut.img") | cpio -it --quiet 2>/dev/null | grep -c '\.ko' || true)
echo "kernel $kver, drivers: $drivers (best of $runs runs)"
printf 'builder: %6.2f s  %9d bytes  %4d modules\n' "$tb" "$sb" "$nb"
printf 'dracut:  %6.2f s  %9d bytes  %4d modules\n' "$td" "$sd" "$nd"
awk -v a="$tb" -v b="$td" 'BEGIN { printf "time ratio builder/dracut: %.3f\n", a / b }'
awk -v a="$sb" -v b="$sd" 'BEGIN { printf "size ratio builder/dracut: %.3f\n", a / b }' 
printf 'executor (static musl): %d bytes (%s)\n' "$(stat -c %s "$executor")" "$executor"

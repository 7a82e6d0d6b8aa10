# shellcheck shell=bash
# Sourced by tests/claims/*.t: TAP helpers, and fake trees that the host build of
# the executor boots (`bootci-executor --root DIR`: system calls printed, not made).
# A tree has what tests/unit/fakeroot.c gives the unit tests: /proc/cmdline,
# the osrelease of build/kernel, /proc/filesystems, /dev/null, a disk sda whose
# sda1 is an ext4 image labelled BOOTCI-RESULTS (found through /sys/block and
# libblkid; its mount is printed, so the results land in DIR/results), the test
# kernel's modules, and the host fixtures as the IGT folder.
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
export PATH=$PATH:/usr/sbin:/sbin
executor=$BUILD/host/bin/bootci-executor
# shellcheck disable=SC2034 # used by the sourcing scripts
aggregator=$BUILD/host/bin/bootci-aggregator
fixtures=$BUILD/host/bin/fixtures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fake_tree DIR CMDLINE: a fresh tree booting with that kernel command line
fake_tree() {
	local dir=$1 kver
	kver=$(cat "$BUILD/kernel/release")
	rm -rf "$dir"
	mkdir -p "$dir/proc/sys/kernel" "$dir/dev" "$dir/sys/block/sda/sda1" "$dir/etc/bootci" \
		"$dir/lib/modules" "$dir/usr/libexec"
	echo "$2" >"$dir/proc/cmdline"
	echo "$kver" >"$dir/proc/sys/kernel/osrelease"
	printf 'nodev\tsysfs\nnodev\tproc\n\text4\n' >"$dir/proc/filesystems"
	: >"$dir/dev/null"
	echo 1 >"$dir/sys/block/sda/sda1/partition"
	truncate -s 12M "$dir/dev/sda"
	truncate -s 8M "$dir/dev/sda1"
	mkfs.ext4 -q -F -L BOOTCI-RESULTS "$dir/dev/sda1"
	ln -s "$BUILD/kernel/root/lib/modules/$kver" "$dir/lib/modules/$kver"
	ln -s "$fixtures" "$dir/usr/libexec/igt-gpu-tools"
}

# boot DIR: the executor boots the tree once (at most 300 s, a bound against a hang, not
# a timing goal); its output, printed system calls and console, goes to DIR.log
boot() {
	timeout -k 5 300 "$executor" --root "$1" >"$1.log" 2>&1
}

# log_has DIR REGEX: a line of the last boot's output matches REGEX; when not, the output
# goes to the TAP log
log_has() {
	grep -qE -- "$2" "$1.log" && return 0
	echo "no line of $1.log matches: $2; its last 25 lines:" | diag
	tail -n 25 "$1.log" | diag
	return 1
}

# console_order DIR REGEX1 REGEX2: a line of the last boot's output matching REGEX2 follows one
# matching REGEX1
console_order() {
	awk -v first="$2" -v second="$3" '$0 ~ first { seen = 1 } seen && $0 ~ second { found = 1 }
		END { exit !found }' "$1.log" && return 0
	echo "$1.log: no line matching $3 after one matching $2" | diag
	return 1
}

# has_line FILE LINE: FILE has exactly that line; when not, FILE goes to the TAP log
has_line() {
	grep -qxF -- "$2" "$1" 2>/dev/null && return 0
	echo "no line '$2' in $1:" | diag
	head -n 30 "$1" 2>&1 | diag
	return 1
}

# result_of JSON TEST: the result of TEST in a results.json
result_of() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["tests"].get(sys.argv[2], {}).get("result", "(absent)"))' "$1" "$2" 2>&1
}

# sysrq_fifo DIR: /proc/sysrq-trigger of the tree is a FIFO this shell holds open (a plain
# file would keep only the last byte written at offset 0); sysrq_read then prints what the
# executor wrote to it since.
sysrq_fifo() {
	mkfifo "$1/proc/sysrq-trigger"
	exec {sysrq_fd}<>"$1/proc/sysrq-trigger"
}
sysrq_read() {
	dd iflag=nonblock bs=4096 count=1 status=none <&"$sysrq_fd"
}

if [ ! -f "$BUILD/kernel/release" ]; then
	echo "1..0 # SKIP no kernel under $BUILD/kernel (make kernel)"
	exit 0
fi

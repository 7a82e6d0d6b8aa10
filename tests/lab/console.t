#!/usr/bin/env bash
# The master's console capture on a real QEMU machine: `lab console` fronts its serial
# line with ser2net, serve reads it (the inventory's console key), and a kernel that
# panics at every boot (no root, panic=1) under OVMF, until its serial line has shown three
# panics (60 s at most), gives serve one file per boot, each cut at OVMF's reset and holding
# its panic, their bytes together exactly what QEMU's own log of the serial line holds.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

if ! command -v ser2net >/dev/null; then
	echo "1..0 # SKIP ser2net is not installed (Debian: apt-get install ser2net)"
	exit 0
fi
plan 5
work=$(mktemp -d)
serve_pid=''
machine=''
cleanup() {
	[ -z "$serve_pid" ] || kill -KILL "$serve_pid" 2>/dev/null
	[ -z "$machine" ] || "$LAB" console "$machine" stop >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

machine=$(fresh_machine console)
[ -n "$machine" ] || { echo "Bail out! no machine"; exit 1; }
port=$(free_port)
serial_port=$(free_port)
"$LAB" console "$machine" start --port "$port" --serial-port "$serial_port" 2>&1 | diag

mkdir -p "$work/data"
: >"$work/tokens"
printf '[machine lab-console]\nmac = 52:54:00:c0:50:01\nconsole = tcp:127.0.0.1:%s\n' "$port" \
	>"$work/data/machines.conf"
"$BUILD/host/bin/bootci-aggregator" serve --data "$work/data" --listen 127.0.0.1:0 \
	--tokens "$work/tokens" --port-file "$work/port" >"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
	grep -q "console lab-console: reading" "$work/serve.log" && break
	sleep 0.1
done
check "serve reads the machine's console through the lab's ser2net" \
	grep -q "console lab-console: reading tcp:127.0.0.1:$port" "$work/serve.log"

# An initramfs with nothing in it: the kernel finds no init and no root, and panics. OVMF
# boots it again and again; QEMU is ended (SIGTERM, as lab's --timeout would) once its log of
# the serial line holds three panics, one more than the checks below need.
: | (cd "$work" && cpio -o -H newc --quiet) >"$work/empty.cpio"
"$LAB" boot "$machine" --kernel "$KERNEL" --initrd "$work/empty.cpio" \
	--append "console=ttyS0 panic=1" --timeout 60 >/dev/null 2>&1 &
lab_pid=$!
# panics: how many panics QEMU's log of the serial line holds so far (none before it exists)
panics() {
	local n
	n=$(grep -a -c 'Kernel panic - not syncing' "$machine/console.log" 2>/dev/null)
	echo "${n:-0}"
}
while kill -0 "$lab_pid" 2>/dev/null && [ "$(panics)" -lt 3 ]; do
	sleep 0.2
done
qemu_pid=$(cat "$machine/qemu.pid" 2>/dev/null)
[ -z "$qemu_pid" ] || kill -TERM "$qemu_pid" 2>/dev/null
wait "$lab_pid"
sleep 1
kill -TERM "$serve_pid"
wait "$serve_pid"
serve_pid=''

consoles=$work/data/consoles/lab-console
mapfile -t boots < <(find "$consoles" -name '[0-9]*.log' | sort)
reset=$'\e[2J\e[01;01H\e[=3h'
full=0 cut_at_reset=0
for f in "${boots[@]}"; do
	grep -aq 'Kernel panic - not syncing' "$f" && full=$((full + 1))
	[ "$(grep -av '^== bootci-serve: ' "$f" | head -c ${#reset})" = "$reset" ] && cut_at_reset=$((cut_at_reset + 1))
done
check "at least two boots, each with its panic (${#boots[@]} files, $full panics)" \
	test "$full" -ge 2
check "every boot starts at OVMF's reset ($cut_at_reset of ${#boots[@]})" test "$cut_at_reset" = "${#boots[@]}"
# The lab's own lines (=== lab ... ===) are the lab's, not the serial line's.
grep -av '^=== lab\|^$' "$machine/console.log" | tr -d '\n' >"$work/qemu.bytes"
cat "${boots[@]}" | grep -av '^== bootci-serve: \|^$' | tr -d '\n' >"$work/served.bytes"
if cmp -s "$work/qemu.bytes" "$work/served.bytes"; then
	ok "the boots together are what QEMU logged of the serial line ($(stat -c %s "$work/served.bytes") bytes)"
else
	not_ok "served bytes differ from QEMU's log"
	cmp "$work/qemu.bytes" "$work/served.bytes" 2>&1 | diag
	diag <"$work/serve.log"
fi
"$LAB" console "$machine" stop >/dev/null 2>&1
check "lab console stop ends the machine's ser2net" test "$("$LAB" console "$machine" status)" = off

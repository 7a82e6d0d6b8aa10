#!/usr/bin/env bash
# serve's console readers against a real ser2net on 127.0.0.1, started by the
# lab's `lab console` as it fronts a machine's serial line: the line is a TCP
# source (console-source.py, what QEMU's serial socket is to ser2net). serve keeps the
# stream per boot; ser2net restarted between two boots loses nothing serve read;
# a flood is cut at the boot's limit and said; a console server that is down
# is said once and tried again; a silent console (over IPv6) is no fault; the
# boots are served; a restarted serve goes on; a boot that died in a test says
# which, with the console from that test's start; a boot netbooted into a run's
# job (its job initrd served) is that run's, and the result that was running
# when it died has its console.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

if ! command -v ser2net >/dev/null; then
	echo "1..0 # SKIP ser2net is not installed (Debian: apt-get install ser2net)"
	exit 0
fi

lab=$SRC/tests/lab/lab
machine=$work/machine
source_pid='' silent_pid=''
cleanup_console() {
	"$lab" console "$machine" stop >/dev/null 2>&1
	[ -z "$source_pid" ] || kill -TERM "$source_pid" 2>/dev/null
	[ -z "$silent_pid" ] || kill -TERM "$silent_pid" 2>/dev/null
	cleanup
}
trap cleanup_console EXIT

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

line_port=$(free_port)
console_port=$(free_port)
down_port=$(free_port)
silent_port=$(free_port)
mkdir -p "$work/data" "$work/line" "$work/silent"
# The silent line listens on IPv6's loopback when the host has one.
silent_address=::1 silent_console="tcp:[::1]:$silent_port"
if ! /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	silent_address=127.0.0.1 silent_console="tcp:127.0.0.1:$silent_port"
fi
: >"$work/tokens"
cat >"$work/data/machines.conf" <<CONF
[machine m1]
mac = 52:54:00:00:00:01
console = tcp:127.0.0.1:$console_port
[machine m2]
mac = 52:54:00:00:00:02
console = tcp:127.0.0.1:$down_port
[machine m3]
mac = 52:54:00:00:00:03
console = $silent_console
CONF
start_ser2net() {
	"$lab" console "$machine" start --port "$console_port" --serial-port "$line_port" >>"$work/lab.log" 2>&1
}
stop_ser2net() {
	"$lab" console "$machine" stop >>"$work/lab.log" 2>&1
}

/usr/bin/python3 "$SRC/tests/aggregator/console-source.py" "$line_port" "$work/line" 2>>"$work/source.log" &
source_pid=$!
/usr/bin/python3 "$SRC/tests/aggregator/console-source.py" "$silent_port" "$work/silent" "$silent_address" \
	2>>"$work/source.log" &
silent_pid=$!
wait_until test -e "$work/line/listening" -a -e "$work/silent/listening" ||
	{ echo "Bail out! the lines did not start"; exit 1; }
start_ser2net
if [ "$("$lab" console "$machine" status)" = on ] && grep -q "keepopen(retry-time=200),tcp,127.0.0.1,$line_port" "$machine/ser2net.yaml" &&
	grep -qx "serial_port=$line_port" "$machine/console.conf"; then
	ok "lab console starts ser2net in front of the machine's serial port"
else
	not_ok "lab console start"
	diag <"$work/lab.log"
fi
start_server --console-boot-max 65536 --console-silent 2

consoles=$work/data/consoles/m1
boot() { printf '%s/%06u.log' "$consoles" "$1"; }
# The console's bytes of a boot file: serve's notes taken out.
console_bytes() { grep -av '^== bootci-serve: ' "$(boot "$1")"; }
# send NAME: the line sends $work/NAME once something is connected, after what was sent before.
sent=0
send() {
	sent=$((sent + 1))
	cp "$work/$1" "$work/line/send.$(printf %03d "$sent")-$1"
}
has() { [ -f "$(boot "$1")" ] && grep -aq -- "$2" "$(boot "$1")"; }

firmware=$'\e[2J\e[01;01H\e[=3h\e[2J\e[01;01H\e[2J\e[01;01H\e[=3h\e[2J\e[01;01H\r\n'
{
	printf '%s' "$firmware"
	printf 'iPXE 1.0.0+ -- Open Source Network Boot Firmware\r\n'
	printf '[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)\r\n'
	for i in $(seq 200); do printf '[    1.%06d] line A%d\r\n' "$i" "$i"; done
	printf '[    3.211558] [bootci] [1/2] igt@igt_kernel@panic-at-start\r\nA-end\r\n'
} >"$work/A"
{
	printf '%s' "$firmware"
	printf '[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)\r\n'
	for i in $(seq 200); do printf '[    1.%06d] line B%d\r\n' "$i" "$i"; done
	printf 'B-end\r\n'
} >"$work/B"

# 1. The stream, kept as it came.
send A
if wait_until has 1 A-end && cmp -s <(console_bytes 1) "$work/A" &&
	grep -q "console m1: reading tcp:127.0.0.1:$console_port" "$work/server.log"; then
	ok "serve reads m1's console through ser2net and keeps it byte for byte"
else
	not_ok "m1's first boot"
	diag <"$work/server.log"
fi

# 2. ser2net restarted between two boots: serve reconnects, nothing it read is lost.
stop_ser2net
check "lab console stop ends its ser2net" test "$("$lab" console "$machine" status)" = off
wait_until grep -q "console m1: lost tcp:127.0.0.1:$console_port: closed by the console server" \
	"$work/server.log"
sleep 1
start_ser2net
send B
if wait_until has 2 B-end && cmp -s <(console_bytes 1) "$work/A" && cmp -s <(console_bytes 2) "$work/B" &&
	grep -aq "^== bootci-serve: lost tcp:127.0.0.1:$console_port at .*: closed by the console server ==" "$(boot 1)" &&
	[ "$(grep -c "console m1: reading" "$work/server.log")" = 2 ]; then
	ok "ser2net restarted: serve reconnects, cuts the next boot at the firmware, loses nothing it read"
else
	not_ok "ser2net restart"
	diag <"$work/server.log"
	find "$consoles" -type f -printf '%f %s\n' | diag
fi

# 3. A flood: the boot keeps its head and its last bytes within its limit, and says so; the
# next boot is whole.
{
	printf '%s' "$firmware"
	head -c 1048576 /dev/zero | tr '\0' 'x' | fold -w 99 | sed 's/$/\r/'
} >"$work/flood"
{
	printf '%s' "$firmware"
	printf 'after the flood\r\n'
} >"$work/after"
send flood
send after
size=0
if wait_until has 4 'after the flood' && size=$(stat -c %s "$(boot 3)") && [ "$size" -le 66000 ] &&
	grep -aq "^== bootci-serve: boot 3 passed 49152 bytes (--console-boot-max 65536): its middle is dropped, its last part kept at its end ==" "$(boot 3)" &&
	grep -aq "^== bootci-serve: [0-9]* bytes of boot 3 dropped here (past its limit); its last [0-9]* bytes follow ==" "$(boot 3)" &&
	grep -q "console m1: boot 3 passed 49152 bytes (--console-boot-max 65536)" "$work/server.log" &&
	grep -q "console m1: [0-9]* bytes of boot 3 dropped (past its limit of 65536 bytes), its last [0-9]* kept" "$work/server.log" &&
	cmp -s <(console_bytes 4) "$work/after"; then
	ok "a 1 MiB flood keeps at most 64 KiB of its boot ($size bytes with the notes), said in the file and the log"
else
	not_ok "flood (boot 3: $size bytes)"
	diag <"$work/server.log"
fi
read -r dropped tail < <(sed -n 's/^== bootci-serve: \([0-9]*\) bytes of boot 3 dropped here.*its last \([0-9]*\) bytes follow ==$/\1 \2/p' "$(boot 3)")
if [ -n "$tail" ] && [ "$((49152 + dropped + tail))" = "$(stat -c %s "$work/flood")" ] &&
	[ "$(head -c 49152 "$(boot 3)" | sha256sum)" = "$(head -c 49152 "$work/flood" | sha256sum)" ] &&
	[ "$(tail -c "$tail" "$(boot 3)" | sha256sum)" = "$(tail -c "$tail" "$work/flood" | sha256sum)" ]; then
	ok "boot 3 kept the flood's first 48 KiB and its last $tail bytes, and counted the $dropped between"
else
	not_ok "boot 3's head and tail (dropped '$dropped', tail '$tail')"
fi

# 4. A console server that is down: said once, tried again, nothing else disturbed.
sleep 2
count=$(grep -c "console m2: tcp:127.0.0.1:$down_port: Connection refused; trying again" "$work/server.log")
check "m2's console server down: said once ($count) while it is tried again" test "$count" = 1
check "m2 has no boot yet" test ! -e "$work/data/consoles/m2/000001.log"

# 5. A console that says nothing (a machine off, or hung without a word): no fault, no noise.
if [ "$(grep -c "console m3:" "$work/server.log")" = 1 ] &&
	grep -qF "console m3: reading $silent_console" "$work/server.log" &&
	[ "$(grep -avc '^== bootci-serve: reading ' "$work/data/consoles/m3/000001.log")" = 0 ]; then
	ok "m3's silent console ($silent_console) stays connected, unremarked, its boot holds only the note"
else
	not_ok "m3's silent console"
	diag <"$work/server.log"
	diag <"$work/data/consoles/m3/000001.log"
fi

# 6. The boots served.
curl -s "$base/machines/m1/consoles/" >"$work/list.html"
if grep -q '<a href="/machines/m1/consoles/4">4</a>' "$work/list.html" &&
	grep -q '<a href="/machines/m1/consoles/1">1</a>' "$work/list.html"; then
	ok "GET /machines/m1/consoles/ lists the boots"
else
	not_ok "console list"
	diag <"$work/list.html"
fi
curl -s -D "$work/headers" -o "$work/boot2" "$base/machines/m1/consoles/2"
if cmp -s "$work/boot2" "$(boot 2)" && grep -qi '^content-type: text/plain' "$work/headers" &&
	grep -qi '^x-content-type-options: nosniff' "$work/headers"; then
	ok "GET /machines/m1/consoles/2 is boot 2's file as text/plain"
else
	not_ok "console boot 2"
	diag <"$work/headers"
fi
check "a boot that is not there is 404" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "$base/machines/m1/consoles/99")" = 404
check "a name that cannot be a machine is 400" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "$base/machines/m%3Cb%3E/consoles/")" = 400

# 6b. Each console's state in one line, from the file serve's reader keeps (no serve needed):
# `schedule machines`, GET /api/v1/schedule/machines and the machine's console list.
"$aggregator" schedule machines --data "$work/data" >"$work/machines.txt" 2>&1
curl -s "$base/api/v1/schedule/machines" >"$work/states.json"
if grep -q "^m1  *console \(connected\|silent\) since .* (tcp:127.0.0.1:$console_port), boot 4.*; 1 boot flooded, the last boot 3 ([0-9]* bytes dropped)$" "$work/machines.txt" &&
	grep -q "^m2  *console reconnecting since .* (tcp:127.0.0.1:$down_port): Connection refused$" "$work/machines.txt" &&
	grep -qF "m3               console silent since " "$work/machines.txt" &&
	/usr/bin/python3 - "$work/states.json" "$down_port" <<'PY'
import json, sys
machines = {m["name"]: m["console"] for m in json.load(open(sys.argv[1]))["machines"]}
m1, m2, m3 = machines["m1"], machines["m2"], machines["m3"]
assert m1["boot"] == 4 and m1["flooded_boots"] == 1 and m1["last_flooded_boot"] == 3, m1
assert m1["last_dropped"] > 0 and not m1["flooding"], m1
assert m2["state"] == "reconnecting" and m2["reason"] == "Connection refused", m2
assert m2["console"] == "tcp:127.0.0.1:" + sys.argv[2] and m2["last_output"] is None, m2
assert m3["state"] == "silent" and m3["line"].startswith("silent since "), m3
PY
then
	ok "each console's state in one line: schedule machines and the JSON say connected or silent, reconnecting and why, flooded boots"
else
	not_ok "console states"
	diag <"$work/machines.txt"
	diag <"$work/states.json"
fi
curl -s "$base/machines/m2/consoles/" >"$work/list-m2.html"
check "the console list of m2 says its console is reconnecting, and why" \
	grep -q "^<p>console reconnecting since .*: Connection refused</p>$" "$work/list-m2.html"

# 7. serve restarted: the last boot goes on, with a note where serve came back.
stop_server
printf 'while serve was away\r\n' >"$work/away"
send away
start_server --console-boot-max 65536 --console-silent 2
wait_until has 4 'while serve was away'
if [ "$server_status" = 0 ] && has 4 'while serve was away' && [ ! -e "$(boot 5)" ] &&
	cmp -s <(console_bytes 4) <(cat "$work/after" "$work/away"); then
	ok "a restarted serve appends to the boot it was reading"
else
	not_ok "serve restart"
	diag <"$work/server.log"
fi

# 8. A boot that died in a test: the job in flight at its end, and its tail, served.
{
	printf '%s' "$firmware"
	printf '[    3.416269] [bootci] [1/3] igt@igt_basic@pass\r\n'
	printf '[    3.517409] [bootci] [2/3] igt@igt_kernel@panic-at-start\r\n'
	printf '[    3.547109] bootci: [1/3] igt@igt_basic@pass pass 0.1s (elapsed 0s, ETA 0s)\r\n'
	printf '[    3.9] Kernel panic - not syncing: sysrq triggered crash\r\n'
	printf '%s' "$firmware"
} >"$work/crash"
send crash
wait_until has 6 'bootci-serve\|=3h'
curl -s -o "$work/tail" -w '%{http_code}' "$base/machines/m1/consoles/5/tail" >"$work/tail.status"
curl -s "$base/machines/m1/consoles/" >"$work/list.html"
if [ "$(cat "$work/tail.status")" = 200 ] &&
	head -n1 "$work/tail" | grep -qF "== bootci-serve: boot 5 of m1 ended while [2/3] igt@igt_kernel@panic-at-start ran; its console from that job's start ==" &&
	[ "$(sed -n 2p "$work/tail")" = $'[    3.517409] [bootci] [2/3] igt@igt_kernel@panic-at-start\r' ] &&
	grep -q 'Kernel panic - not syncing' "$work/tail" &&
	grep -qF '<a href="/machines/m1/consoles/5/tail">[2/3] igt@igt_kernel@panic-at-start</a>' "$work/list.html"; then
	ok "a boot that died in a test: the test in flight and the console from its start are served and listed"
else
	not_ok "crash tail"
	diag <"$work/tail"
fi
check "a boot that ended with no test in flight has no tail (404)" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "$base/machines/m1/consoles/4/tail")" = 404

# 9. A run's boot: the firmware netboots m1's job (its job initrd fetched), a test panics; the
# result that was running has that boot's console, and another run's or test's has none.
image=$work/image
mkdir -p "$image"
head -c 4096 /dev/urandom >"$image/vmlinuz"
head -c 8192 /dev/urandom >"$image/initrd.img"
printf '#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0\ninitrd initrd.img\nboot\n' >"$image/boot.ipxe"
printf 'igt@igt_basic@pass\nigt@igt_kernel@panic-at-start\n' >"$image/fast.testlist"
manifest_line() { printf '%s %s 100644 %s bootci-builder\n' "$(sha256sum <"$image/$1" | cut -d' ' -f1)" "$(stat -c %s "$image/$1")" "$1"; }
{
	echo "# bootci-builder manifest: SHA256 SIZE MODE PATH ORIGIN"
	manifest_line boot.ipxe
	manifest_line initrd.img
	manifest_line vmlinuz
} >"$image/manifest"
"$aggregator" publish --data "$work/data" --tree t --commit abc --tier fast --build b1 "$image" >"$work/publish.log" 2>&1
# Boot 6 began with the firmware's reset that ended boot 5: the firmware netboots.
script=$(curl -sf "$base/api/v1/boot/52:54:00:00:00:01")
initrd_url=$(sed -n 's/^initrd --name job.img //p' <<<"$script")
curl -sf -o /dev/null "$initrd_url"
wait_until has 6 "netboot of run b1-fast"
{
	printf '[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)\r\n'
	printf '[    3.416269] [bootci] [1/2] igt@igt_basic@pass\r\n'
	printf '[    3.517409] [bootci] [2/2] igt@igt_kernel@panic-at-start\r\n'
	printf '[    3.547109] bootci: [1/2] igt@igt_basic@pass pass 0.1s (elapsed 0s, ETA 0s)\r\n'
	printf '[    3.9] Kernel panic - not syncing: sysrq triggered crash in b1-fast\r\n'
	printf '%s' "$firmware"
} >"$work/run-crash"
send run-crash
wait_until has 7 '=3h'
result_console() { curl -s -o "$work/result-console" -w '%{http_code}' "$base/machines/m1/runs/$1/results/$2/console"; }
if [ -n "$initrd_url" ] && grep -aq "^== bootci-serve: netboot of run b1-fast (its job initrd served at .*) ==" "$(boot 6)" &&
	[ "$(result_console b1-fast igt@igt_kernel@panic-at-start)" = 200 ] &&
	head -n1 "$work/result-console" | grep -qF "boot 6 of m1 ended while [2/2] igt@igt_kernel@panic-at-start ran" &&
	grep -q 'Kernel panic - not syncing: sysrq triggered crash in b1-fast' "$work/result-console"; then
	ok "the result that was running when its run's boot died has that boot's console"
else
	not_ok "a result's console"
	diag <<<"$script"
	diag <"$work/publish.log"
	[ ! -f "$work/result-console" ] || diag <"$work/result-console"
	find "$consoles" -type f -printf '%f %s\n' | diag
fi
check "a result that was not running at a crash has none (404)" \
	test "$(result_console b1-fast igt@igt_basic@pass)" = 404
check "nor has the same test in another run (404)" \
	test "$(result_console b2-fast igt@igt_kernel@panic-at-start)" = 404

# 10. The inventory changed: a console no longer named is closed; one that moved is read there.
cat >"$work/data/machines.conf.new" <<CONF
[machine m1]
mac = 52:54:00:00:00:01
console = tcp:127.0.0.1:$down_port
[machine m3]
mac = 52:54:00:00:00:03
console = $silent_console
CONF
mv "$work/data/machines.conf.new" "$work/data/machines.conf"
if wait_until grep -q "console m2: no longer in the inventory: not read" "$work/server.log" &&
	wait_until grep -qF "console m1: now tcp:127.0.0.1:$down_port (was tcp:127.0.0.1:$console_port)" "$work/server.log" &&
	wait_until grep -q "console m1: tcp:127.0.0.1:$down_port: Connection refused" "$work/server.log"; then
	ok "the inventory re-read: m2's console closed, m1's read at its new place"
else
	not_ok "inventory change"
	diag <"$work/server.log"
fi

stop_server
done_testing

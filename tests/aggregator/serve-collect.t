#!/usr/bin/env bash
# The two ends together: `collect` (the known-good image's uploader) sends a
# finished run to a real `serve`, which keeps it, ingests it and serves its
# logs; with the master down first, the run stays and the next collect
# uploads it.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

scenario=$SRC/tests/resultgen/scenarios/piglit-style-default-level
results=$work/results
mkdir -p "$results/runs"
printf 'machine = lab-01\ntoken = token-of-lab-01\n' >"$results/bootci-machine.conf"
chmod 600 "$results/bootci-machine.conf"
add_machine lab-01 token-of-lab-01

# new_run NAME: a finished run folder (the scenario, its journal saying done).
new_run() {
	cp -r "$scenario" "$results/runs/$1"
	echo done >"$results/runs/$1/bootci-journal.txt"
}
collect() {
	local master=$1 deadline=${2:-60s}
	shift $(($# < 2 ? $# : 2))
	"$BUILD/musl/bin/bootci-collect" --results "$results" --master "$master" --no-efi --config /dev/null \
		--cmdline /dev/null --deadline "$deadline" "$@" >>"$work/collect.log" 2>&1
}

new_run igt1
start_server
collect "$base"
status=$?
out_url=$(run_url lab-01 igt1)/results/igt@successtest@first-subtest/out
if [ "$status" = 0 ] && [ ! -e "$results/runs/igt1" ] &&
	wait_until grep -q "PUT /api/v1/machines/lab-01/runs/igt1 201 .*stored and ingested" "$work/server.log" &&
	curl -s "$out_url" | cmp -s - "$scenario/0/out.txt"; then
	ok "collect uploads a finished run: stored, ingested, its out.txt served back, deleted on the partition"
else
	not_ok "collect against serve: exit $status"
	diag <"$work/collect.log"
fi
stop_server

# The master down: the run stays; up again: the next collect uploads it.
new_run igt2
collect "http://127.0.0.1:$port" 2s
status=$?
check "master down: collect exits $status, the run stays" test "$status" = 1 -a -d "$results/runs/igt2"
start_server
collect "$base"
status=$?
answer=$(python3 "$tool" get "$(run_url lab-01 igt2)" --token token-of-lab-01)
if [ "$status" = 0 ] && [ ! -e "$results/runs/igt2" ] && grep -q '"ingested": *true' <<<"$answer"; then
	ok "master back: the next collect uploads the run ($answer)"
else
	not_ok "master back: exit $status, $answer"
	diag <"$work/collect.log"
fi
stop_server

# A deletion an older collect did not finish (issue 34, point 4): bootci-uploaded.txt and a
# job folder gone, the journal's done kept. Archived again it has another digest, which the
# master refuses (409); its files are the master's copy's, byte for byte, so it is recognised
# as the run the master holds and deleted, not retried at every boot.
start_server
new_run igt3
collect "$base" 60s --keep 1
first=$?
rm -rf "$results/runs/igt3/bootci-uploaded.txt" "$results/runs/igt3/0" "$results/runs/igt3/uname.txt"
: >"$work/collect.log"
collect "$base"
status=$?
if [ "$first" = 0 ] && [ "$status" = 0 ] && [ ! -e "$results/runs/igt3" ] &&
	grep -q "run igt3: the master holds it already (sha256 [0-9a-f]*): .*marked uploaded" "$work/collect.log" &&
	[ -z "$(ls -A "$results/outgoing")" ]; then
	ok "a run whose deletion was cut short is recognised as the master's and deleted"
else
	not_ok "a half-deleted run: exit $first then $status"
	diag <"$work/collect.log"
fi

# Another run under an id the master holds (a file here the master does not have): refused
# once, kept with the reason, and not sent again at the next boot.
new_run igt4
collect "$base" 60s --keep 1
rm -f "$results/runs/igt4/bootci-uploaded.txt"
echo "a line the master's copy does not have" >>"$results/runs/igt4/0/out.txt"
: >"$work/collect.log"
collect "$base"
status=$?
refused=$results/runs/igt4/bootci-refused.txt
if [ "$status" = 1 ] && [ -f "$results/runs/igt4/0/out.txt" ] &&
	grep -q "run igt4 refused: the master holds another run under this id .*0/out.txt differs" "$work/collect.log" &&
	grep -q '^reason 0/out.txt differs' "$refused" 2>/dev/null && [ -z "$(ls -A "$results/outgoing")" ]; then
	ok "another run under a stored id is refused, kept, and says why in bootci-refused.txt"
else
	not_ok "a different run under a stored id: exit $status"
	diag <"$work/collect.log"
	diag <"$refused"
fi
: >"$work/collect.log"
requests=$(grep -c "runs/igt4" "$work/server.log")
collect "$base"
status=$?
if [ "$status" = 0 ] && [ -f "$refused" ] && ! grep -q igt4 "$work/collect.log" &&
	[ "$(grep -c "runs/igt4" "$work/server.log")" = "$requests" ]; then
	ok "the refused run is not sent again, nor said again"
else
	not_ok "the refused run at the next collect: exit $status"
	diag <"$work/collect.log"
fi
stop_server

# Boots that end before their run begins (a run folder that cannot be made), counted by the
# executor in an EFI variable: once the count reaches its cap, the known-good image's collect
# tells the master, which takes the machine out with that reason (issue 34, point 5).
efivars=$work/root/sys/firmware/efi/efivars
note_var=$efivars/BootciBootFault-298edbf6-7cf3-48a1-969d-eca01623e23c
mkdir -p "$efivars"
fault_note() { printf '\007\000\000\000run r1\nboots %s\ncap 3\nreason cannot create the run folder /results/runs/r1: Structure needs cleaning (EUCLEAN)\n' "$1" >"$note_var"; }
printf '[machine lab-01]\nmac = 52:54:00:00:00:41\n' >"$work/data/machines.conf"
start_server
fault_note 2
: >"$work/collect.log"
collect "$base" 60s --root "$work/root"
status=$?
if [ "$status" = 0 ] && [ -s "$note_var" ] && ! grep -q "/fault" "$work/server.log" && ! grep -q "boots in a row" "$work/collect.log"; then
	ok "a boot fault note below its cap stays on the machine, not sent"
else
	not_ok "a note below its cap: exit $status"
	diag <"$work/collect.log"
fi
fault_note 3
collect "$base" 60s --root "$work/root"
status=$?
if [ "$status" = 3 ] && grep -q "collect: the master holds this machine out: exit status 3 asks for a power-off" "$work/collect.log"; then
	ok "collect exits 3 once the master took the machine out on its note (the image powers off)"
else
	not_ok "collect's status after the master took the note: $status (3 expected)"
	diag <"$work/collect.log"
fi
"$aggregator" schedule --data "$work/data" machines >"$work/machines.out" 2>&1
reason="the machine reported: 3 boots in a row ended before run r1 began: cannot create the run folder /results/runs/r1: Structure needs cleaning (EUCLEAN)"
if [ ! -e "$note_var" ] && grep -q "PUT /api/v1/machines/lab-01/fault 200 .*taken out of the schedule" "$work/server.log" &&
	grep -q "collect: the master has the fault note" "$work/collect.log" &&
	grep -Fq "lab-01           52:54:00:00:00:41 out   0 power cycle(s): $reason" "$work/machines.out" &&
	curl -s "$base/api/v1/boot/52:54:00:00:00:41" | grep -q "out of the schedule"; then
	ok "a due boot fault note goes to the master, which takes the machine out with it; the note is removed"
else
	not_ok "a due boot fault note"
	diag <"$work/collect.log"
	diag <"$work/machines.out"
	grep fault "$work/server.log" | diag
fi
# The note is gone; the master still holds the machine out: collect's hello learns it.
: >"$work/collect.log"
collect "$base" 60s --root "$work/root"
status=$?
if [ "$status" = 3 ] && grep -q "PUT /api/v1/machines/lab-01/hello 200 .*out of the schedule" "$work/server.log" &&
	grep -Fq "collect: the master holds this machine out of its schedule: $reason" "$work/collect.log"; then
	ok "a machine out of the schedule learns it from its hello at every boot, and exits 3"
else
	not_ok "hello of a machine held out: exit $status"
	diag <"$work/collect.log"
	grep hello "$work/server.log" | diag
fi
"$aggregator" schedule --data "$work/data" return lab-01 >/dev/null 2>&1
: >"$work/collect.log"
collect "$base" 60s --root "$work/root"
status=$?
hello=$(curl -s -X PUT -H "Authorization: Bearer token-of-lab-01" --data-binary '' "$base/api/v1/machines/lab-01/hello")
if [ "$status" = 0 ] && ! grep -q "holds this machine out" "$work/collect.log" &&
	[ "$(printf '%s' "$hello" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d["note"] == "")')" = "ready True" ]; then
	ok "once returned, its hello finds it in the schedule again (exit 0)"
else
	not_ok "hello after schedule return: exit $status, answer $hello"
	diag <"$work/collect.log"
fi
fault_url=$base/api/v1/machines/lab-01/fault
wrong=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer token-of-lab-02" --data-binary 'x' "$fault_url")
lines=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer token-of-lab-01" --data-binary $'one\ntwo' "$fault_url")
long=$(head -c 300 /dev/zero | tr '\0' x | curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer token-of-lab-01" --data-binary @- "$fault_url")
if [ "$wrong" = 403 ] || [ "$wrong" = 401 ] && [ "$lines" = 400 ] && [ "$long" = 413 ]; then
	ok "a fault note needs the machine's token and is one line of at most 200 bytes ($wrong, $lines, $long)"
else
	not_ok "fault note refusals: $wrong, $lines, $long"
fi
stop_server

# The machine's quota in incoming/ full (a cut upload of its own): 429, which collect takes as
# "try later": it retries until its deadline, keeps the run and marks it neither uploaded nor
# refused.
mkdir -p "$work/noise"
head -c 400000 /dev/urandom >"$work/noise/noise.bin"
python3 "$tool" archive good "$work/cut.tar.zst" --machine lab-01 --run cut1 --dir "$work/noise" >/dev/null
cut_size=$(stat -c %s "$work/cut.tar.zst")
start_server --max-incoming "$cut_size"
python3 "$tool" put "$(run_url lab-01 cut1)" "$work/cut.tar.zst" --token token-of-lab-01 \
	--stop-after $((cut_size - 10)) >/dev/null
wait_until part_has lab-01 cut1
new_run igt9
: >"$work/collect.log"
collect "$base" 3s
status=$?
if [ "$status" = 1 ] && [ -d "$results/runs/igt9" ] && [ ! -e "$results/runs/igt9/bootci-refused.txt" ] &&
	[ ! -e "$results/runs/igt9/bootci-uploaded.txt" ] &&
	grep -q "HTTP 429: .*try later: machine lab-01 holds .*; retrying in" "$work/collect.log"; then
	ok "past the machine's quota: collect retries the 429 until its deadline, the run kept, not refused"
else
	not_ok "past the machine's quota: collect exits $status"
	diag <"$work/collect.log"
fi
stop_server
done_testing

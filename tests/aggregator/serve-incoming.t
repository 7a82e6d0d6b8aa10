#!/usr/bin/env bash
# DATA/incoming/ does not fill up: a machine's unfinished uploads count
# against its quota (--max-incoming), past which an upload is answered 429,
# which collect takes as "try later"; a cut upload not written for
# --incoming-max-age seconds is removed, at start and while serve runs, and
# the log says so; an upload in progress is never removed, however long it
# pauses.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

add_machine m1 token-of-m1
json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1].split(" ",1)[1]); print(d.get(sys.argv[2]))' "$@"; }
put() { python3 "$tool" put "$(run_url m1 "$1")" "$work/$1.tar.zst" --token token-of-m1 "${@:2}"; }
get() { python3 "$tool" get "$(run_url m1 "$1")" --token token-of-m1; }
# archive RUN BYTES: $work/RUN.tar.zst holding BYTES of noise (incompressible).
archive() {
	mkdir -p "$work/files-$1"
	head -c "$2" /dev/urandom >"$work/files-$1/noise.bin"
	python3 "$tool" archive good "$work/$1.tar.zst" --machine m1 --run "$1" --dir "$work/files-$1" >/dev/null
}
for run in a b c d e f; do archive $run 600000; done
archive big 1100000

start_server --max-incoming 1M

# a is cut after 500 kB: b's 600 kB do not fit beside it in 1 MiB.
put a --stop-after 500000 >/dev/null
wait_until part_has m1 a
answer=$(put b)
if [ "${answer%% *}" = 429 ] && grep -qF "try later: machine m1 holds" <<<"$answer" &&
	grep -qF "past its quota of 1048576" <<<"$answer" && nothing_kept m1 b; then
	ok "an upload past the machine's quota: 429, 'try later' and why, nothing of it kept"
else
	not_ok "an upload past the machine's quota: $answer"
fi
answer=$(put b --no-length)
if [ "${answer%% *}" = 429 ] && grep -qF "try later" <<<"$answer" && nothing_kept m1 b; then
	ok "the same without a length (chunked): 429 once its bytes pass the quota, nothing kept"
else
	not_ok "chunked past the quota: $answer"
fi
answer=$(put big)
check "an archive bigger than the quota itself: 413, final ($answer)" test "${answer%% *}" = 413

received=$(json "$(get a)" received)
answer=$(put a --from "$received")
check "the cut upload resumes within the quota: 201 ($answer)" test "${answer%% *}" = 201
answer=$(put b)
check "once it is stored, the refused upload fits: 201 ($answer)" test "${answer%% *}" = 201

# c is cut and left; serve stops; the .part ages 100 s; serve starts with an age of 50 s.
put c --stop-after 300000 >/dev/null
wait_until part_has m1 c
stop_server
touch -d "@$(($(date +%s) - 100))" "$work/data/incoming/m1/c.part"
start_server --incoming-max-age 50
if [ ! -e "$work/data/incoming/m1/c.part" ] && [ ! -e "$work/data/incoming/m1/c.sha256" ] &&
	grep -qE "incoming/m1/c\.part: expired, removed \([0-9]+ bytes of a cut upload not written for [0-9]+ s, past --incoming-max-age 50\)" "$work/server.log"; then
	ok "a cut upload older than --incoming-max-age is removed at start, said in the log"
else
	not_ok "expiry at start: $(find "$work/data/incoming" -type f | tr '\n' ' ')"
	diag <"$work/server.log"
fi
answer=$(get c)
check "the expired run is absent: the machine uploads it afresh ($answer)" test "$(json "$answer" state)" = absent

# While serve runs: d is cut and expires; e pauses 5 s mid-body, 3 s past the age, and is kept.
stop_server
start_server --incoming-max-age 2
put d --stop-after 300000 >/dev/null
wait_until part_has m1 d
# expired RUN: its .part is gone and the log says why (the line comes just after the removal).
expired() { [ ! -e "$work/data/incoming/m1/$1.part" ] && grep -qF "incoming/m1/$1.part: expired, removed" "$work/server.log"; }
if wait_until expired d; then
	ok "a cut upload is removed while serve runs, once unwritten past --incoming-max-age"
else
	not_ok "periodic expiry: d.part still there"
	diag <"$work/server.log"
fi
answer=$(put e --pause-after 100000 --pause 5)
if [ "${answer%% *}" = 201 ] && ! grep -qF "incoming/m1/e.part" "$work/server.log"; then
	ok "an upload in progress that pauses past the age is not removed: 201"
else
	not_ok "an upload in progress: $answer"
	diag <"$work/server.log"
fi
stop_server
check "SIGTERM: exit 0 (got $server_status)" test "$server_status" = 0
done_testing

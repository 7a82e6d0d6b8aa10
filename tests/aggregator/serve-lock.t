#!/usr/bin/env bash
# One serve per data folder: a second serve on the same folder refuses at
# start, naming the first's PID, and touches nothing; a lock file left by a
# serve killed with SIGKILL does not block the next one.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

add_machine m1 token-of-m1
start_server
first=$server_pid

# A cut upload of the first serve's: a second serve's start must not sweep it.
python3 "$tool" archive good "$work/a.tar.zst" --machine m1 --run run1 >/dev/null
python3 "$tool" put "$(run_url m1 run1)" "$work/a.tar.zst" --token token-of-m1 --stop-after 100 >/dev/null
wait_until part_has m1 run1

timeout 20 "$aggregator" serve --data "$work/data" --listen 127.0.0.1:0 --tokens "$work/tokens" \
	--port-file "$work/port2" >"$work/second.log" 2>&1
status=$?
if [ "$status" = 1 ] && grep -qF "in use by another serve (PID $first," "$work/second.log" &&
	[ ! -e "$work/port2" ]; then
	ok "a second serve on the same data folder: exit 1, naming PID $first"
else
	not_ok "a second serve on the same data folder: exit $status"
	diag <"$work/second.log"
fi
check "the first serve's cut upload is still there" part_has m1 run1
answer=$(curl -s --max-time 5 "$base/api/v1/health")
check "the first serve still answers: $answer" test "$answer" = '{"status": "ok"}'

# Killed: the lock file stays with the dead PID in it, and does not block.
kill -KILL "$first"
wait "$first" 2>/dev/null
server_pid=
check "the killed serve's lock file is left with its PID" grep -qx "$first" "$work/data/serve.lock"
start_server
answer=$(curl -s --max-time 5 "$base/api/v1/health")
check "a serve after a killed one starts and answers: $answer" test "$answer" = '{"status": "ok"}'
check "its PID is in the lock file" grep -qx "$server_pid" "$work/data/serve.lock"
stop_server
check "SIGTERM: exit 0 (got $server_status)" test "$server_status" = 0
check "a clean stop leaves no PID in the lock file" test ! -s "$work/data/serve.lock"
done_testing

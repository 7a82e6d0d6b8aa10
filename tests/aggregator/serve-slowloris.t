#!/usr/bin/env bash
# Slow clients do not keep the machines out (issue 33, point 2). Under the
# default settings, 300 connections that trickle a request head a byte at a
# time (more than --max-connections) wait in the gate, not in a slot: the
# health check and a machine's upload are served meanwhile, and the gate
# closes them at --header-timeout. A machine's token holds at most
# --max-per-token connections, and clients without a token at most half of
# --max-connections, so that the others' uploads still get a slot.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

add_machine m1 token-of-m1
add_machine m2 token-of-m2
start_server
python3 "$tool" archive good "$work/a.tar.zst" --machine m1 --run run1 >/dev/null
python3 "$tool" archive good "$work/b.tar.zst" --machine m2 --run run2 >/dev/null
python3 "$tool" archive good "$work/c.tar.zst" --machine m2 --run run3 >/dev/null

# hold COUNT KIND SECONDS: COUNT connections held open SECONDS, in the background; "open N"
# in $work/held.KIND once they are. slow: a request head never finished, a byte every 2 s;
# upload-m1: m1's PUT whose head is complete and whose body never comes; anonymous: the
# same without a token (its 401 waits for the body). "closed N" at the end: how many the server closed.
hold() {
	: >"$work/held.$2"
	python3 - "$port" "$1" "$2" "$3" >"$work/held.$2" 2>&1 <<'PY' &
import socket, sys, time
port, count, kind, seconds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
heads = {
    "slow": b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n",
    "upload-m1": b"PUT /api/v1/machines/m1/runs/held HTTP/1.1\r\nHost: x\r\n"
                 b"Authorization: Bearer token-of-m1\r\nX-Bootci-Sha256: " + b"0" * 64 +
                 b"\r\nContent-Length: 1000\r\n\r\n",
    "anonymous": b"PUT /api/v1/machines/m1/runs/x HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Length: 1000\r\n\r\n",
}
conns = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(heads[kind])
    conns.append(s)
print("open", len(conns), flush=True)
closed = set()
end = time.time() + seconds
while time.time() < end:
    time.sleep(2)
    for i, s in enumerate(conns):
        if i in closed:
            continue
        try:
            if kind == "slow":
                s.send(b"X")
            else:
                s.setblocking(False)
                if s.recv(4096) == b"":
                    closed.add(i)
        except BlockingIOError:
            pass
        except OSError:
            closed.add(i)
print("closed", len(closed), flush=True)
PY
}
held_open() { grep -q "^open $1" "$work/held.$2"; }
put() { python3 "$tool" put "$(run_url "$1" "$2")" "$work/$3.tar.zst" --token "token-of-$1"; }

# Held 30 s, more than the two requests below may take (12 s each): they are served while
# the slow heads are open, not once they go.
hold 300 slow 30
held=$!
wait_until held_open 300 slow
sleep 3	# the server has taken what it will of them
health=$(curl -s --max-time 12 "$base/api/v1/health")
check "300 slow heads open (past --max-connections 256): health answers ($health)" \
	test "$health" = '{"status": "ok"}'
answer=$(timeout 12 python3 "$tool" put "$(run_url m1 run1)" "$work/a.tar.zst" --token token-of-m1)
check "300 slow heads open: a machine's upload is stored (${answer%% *})" test "${answer%% *}" = 201
wait "$held"
if grep -q "^closed 300" "$work/held.slow" &&
	grep -q "gate: [0-9]* connection(s) closed without a complete request head within 10 s" "$work/server.log"; then
	ok "the slow heads are closed at --header-timeout (10 s), however they trickle, and the log says so"
else
	not_ok "slow heads: $(cat "$work/held.slow")"
	grep gate "$work/server.log" | diag
fi

# One machine's token: at most --max-per-token (8) connections; the ninth is told to try later.
hold 8 upload-m1 6
held=$!
wait_until held_open 8 upload-m1
answer=$(put m1 run9 a)
if [ "${answer%% *}" = 429 ] && grep -qF "machine m1 has 8 connections open (--max-per-token 8): try later" <<<"$answer"; then
	ok "a ninth connection with m1's token: 429, try later"
else
	not_ok "a ninth connection with m1's token: $answer"
fi
answer=$(put m2 run2 b)
check "meanwhile another machine's upload is stored (${answer%% *})" test "${answer%% *}" = 201
wait "$held"
stop_server

# Without a token, at most half of --max-connections: the other half stays for the machines.
start_server --max-connections 8
hold 4 anonymous 6
held=$!
wait_until held_open 4 anonymous
code=$(curl -s -o "$work/busy" -w '%{http_code}' --max-time 10 "$base/api/v1/health")
if [ "$code" = 503 ] && grep -qF "try later" "$work/busy"; then
	ok "a fifth connection without a token, of --max-connections 8: 503, try later"
else
	not_ok "a fifth connection without a token: $code $(cat "$work/busy")"
fi
answer=$(put m2 run3 c)
check "meanwhile a machine's upload is stored (${answer%% *})" test "${answer%% *}" = 201
wait "$held"
stop_server
check "SIGTERM: exit 0 (got $server_status)" test "$server_status" = 0
done_testing

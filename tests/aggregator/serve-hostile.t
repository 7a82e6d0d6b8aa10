#!/usr/bin/env bash
# serve never trusts an upload: every hostile archive, request or client is
# refused with a status and a message saying why, and nothing of it is kept
# (no run record, no archive, no partial upload).
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

add_machine m1 token-of-m1
add_machine m2 token-of-m2
start_server --max-body 4M --idle-timeout 2

# refused NAME RUN EXPECTED-STATUS MESSAGE-PART COMMAND...: COMMAND prints "STATUS BODY".
refused() {
	local name=$1 run=$2 status=$3 message=$4 answer
	shift 4
	answer=$("$@" 2>&1)
	if [ "${answer%% *}" != "$status" ]; then
		not_ok "$name: expected $status, got: $answer"
	elif ! grep -qF -- "$message" <<<"$answer"; then
		not_ok "$name: the answer '$answer' does not say '$message'"
	elif ! nothing_kept m1 "$run"; then
		not_ok "$name: something was kept: $(find "$work/data" -type f | tr '\n' ' ')"
	else
		ok "$name: $status, '$message', nothing kept"
	fi
}

# archive KIND RUN: builds $work/RUN.tar.zst of that kind for m1.
archive() { python3 "$tool" archive "$1" "$work/$2.tar.zst" --machine m1 --run "$2" >/dev/null; }
put() { python3 "$tool" put "$(run_url m1 "$1")" "$work/$1.tar.zst" --token token-of-m1 "${@:2}"; }

archive dotdot dotdot
refused "../ in an entry" dotdot 422 "'../escape.txt': a '..' component" put dotdot
archive absolute absolute
refused "absolute entry" absolute 422 "'/tmp/escape.txt': an absolute path" put absolute
archive symlink symlink
refused "symlink escape" symlink 422 "'0/link': a symlink to '../../../etc/passwd', outside the run" put symlink
archive hardlink hardlink
refused "hardlink escape" hardlink 422 "'0/hard': a hardlink to '../../etc/passwd', outside the run" put hardlink
archive device device
refused "device node" device 422 "'0/null': a character device" put device
archive fifo fifo
refused "FIFO" fifo 422 "'0/fifo': a FIFO" put fifo
archive bomb bomb
refused "zstd bomb (a file of 7 GiB of zeros, refused at its header)" bomb 422 \
	"entry 2 'zeros.bin': 7516192768 bytes, more than a file may hold (4294967296, the limit)" put bomb
archive million million
refused "200001 entries" million 422 "entry 200001: more than 200000 entries (the limit)" put million
archive lies lies
refused "manifest that lies (a sha256)" lies 422 "the manifest says 0000000000000000" put lies
archive unlisted unlisted
refused "a file the manifest does not list" unlisted 422 "'0/extra.txt': not in the manifest" put unlisted
archive badjson badjson
refused "manifest of bad JSON" badjson 422 "'manifest.json': bad JSON at byte" put badjson
archive otherrun otherrun
refused "manifest of another run" otherrun 422 "run_id 'otherrunx', but uploaded as 'otherrun'" put otherrun
# Only the run archive's form: GNU tar's headers, another compression, are refused as such.
archive gnu gnu
refused "GNU tar headers" gnu 422 "entry 1: a GNU tar header" put gnu
archive gzip gzip
refused "gzip, not zstd" gzip 422 "gzip-compressed (a run archive is compressed with zstd)" put gzip

archive good good
refused "digest mismatch" good 400 "digest mismatch" put good --sha256 "$(printf '%064d' 0)"
refused "no token" good 401 "no Authorization: Bearer token" \
	python3 "$tool" put "$(run_url m1 good)" "$work/good.tar.zst"
refused "wrong token" good 401 "the token is no machine's" put good --token not-a-token
refused "uploading as another machine" good 403 "the token is machine m2's, not m1's" \
	put good --token token-of-m2

head -c 5M /dev/urandom >"$work/big.bin"
cp "$work/big.bin" "$work/big.tar.zst"
refused "oversize, announced (Content-Length)" big 413 "an archive of 5242880 bytes (at most 4194304)" put big
refused "oversize, chunked" big 413 "an archive of more than 4194304 bytes" put big --no-length

for path in 'a%2Fb' '..' '../runs/x' '.' 'a/b'; do
	refused "run id '$path'" x 400 "is not a word" \
		python3 "$tool" raw 127.0.0.1 "$port" "/api/v1/machines/m1/runs/$path" --token token-of-m1
done
refused "machine '..'" x 400 "machine '..' is not a word" \
	python3 "$tool" raw 127.0.0.1 "$port" "/api/v1/machines/../runs/x" --token token-of-m1

# One byte every 3 s against an idle timeout of 2 s: the server hangs up.
answer=$(python3 "$tool" slow "$(run_url m1 slow)" --token token-of-m1 --interval 3 --give-up 30)
if [[ $answer =~ ^closed\ after\ [01]\ bytes$ ]] && [ ! -e "$work/data/runs/m1/slow.json" ] &&
	wait_until grep -q "PUT /api/v1/machines/m1/runs/slow .*idle timeout: connection closed" "$work/server.log"; then
	ok "slow client: $answer, logged as an idle timeout, no run kept"
else
	not_ok "slow client: $answer"
	diag <"$work/server.log"
fi

# One byte a second, well within the idle timeout, against a request timeout of 3 s.
stop_server
start_server --idle-timeout 2 --request-timeout 3 --max-per-ip 2
answer=$(python3 "$tool" slow "$(run_url m1 trickle)" --token token-of-m1 --interval 1 --give-up 30)
if [[ $answer =~ ^closed\ after\ [0-9]+\ bytes$ ]] && [ ! -e "$work/data/runs/m1/trickle.json" ] &&
	wait_until grep -q "PUT /api/v1/machines/m1/runs/trickle 408 .*the request took more than 3 s" "$work/server.log"; then
	ok "trickling client: $answer by the request timeout (408 in the log), no run kept"
else
	not_ok "trickling client: $answer"
	diag <"$work/server.log"
fi

# Two connections held open from 127.0.0.1: a third is closed unanswered, and once they go
# a new one is served.
python3 - "$port" >"$work/perip" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
time.sleep(0.2)
third = socket.create_connection(("127.0.0.1", port), timeout=5)
third.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
try:
    print("third:", "closed" if third.recv(100) == b"" else "answered")
except (ConnectionResetError, socket.timeout) as e:
    print("third:", "closed" if isinstance(e, ConnectionResetError) else "hung")
for s in held:
    s.close()
PY
# served_again: once the server has seen the two go, a new connection is answered.
served_again() { health=$(curl -s --max-time 5 "$base/api/v1/health"); [ "$health" = '{"status": "ok"}' ]; }
wait_until served_again
if grep -q "third: closed" "$work/perip" && [ "$health" = '{"status": "ok"}' ]; then
	ok "--max-per-ip 2: a third connection from one address is closed, later ones served"
else
	not_ok "--max-per-ip 2: $(cat "$work/perip"), then health '$health'"
fi

# The server is still well after all of it.
answer=$(curl -s "$base/api/v1/health")
check "health after the hostile inputs: $answer" test "$answer" = '{"status": "ok"}'
stop_server
check "SIGTERM: exit status 0 (got $server_status)" test "$server_status" = 0
done_testing

#!/usr/bin/env bash
# serve's happy paths against a real server: an upload is stored once, the
# same bytes again are 200 without a second copy, other bytes for the same run
# are 409, an interrupted upload resumes from what the server confirmed, a
# SIGTERM lets the upload in flight finish, and a restart loses nothing
# acknowledged. Also over TLS.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

add_machine m1 token-of-m1
start_server

json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1].split(" ",1)[1]); print(d.get(sys.argv[2]))' "$@"; }
put() { python3 "$tool" put "$(run_url m1 "$1")" "$2" --token token-of-m1 "${@:3}"; }
get() { python3 "$tool" get "$(run_url m1 "$1")" --token token-of-m1; }

python3 "$tool" archive good "$work/a.tar.zst" --machine m1 --run run1 >/dev/null
sha_a=$(sha256sum "$work/a.tar.zst" | cut -d' ' -f1)
answer=$(get run1)
check "GET before any upload: 404 absent ($answer)" test "${answer%% *}" = 404 -a "$(json "$answer" state)" = absent

answer=$(put run1 "$work/a.tar.zst")
if [ "${answer%% *}" = 201 ] && [ "$(json "$answer" sha256)" = "$sha_a" ] &&
	cmp -s "$work/a.tar.zst" "$work/data/archives/$sha_a.tar.zst"; then
	ok "upload: 201 with the archive's sha256, kept as archives/<sha256>.tar.zst"
else
	not_ok "upload: $answer"
fi
record=$(cat "$work/data/runs/m1/run1.json")
answer=$(put run1 "$work/a.tar.zst")
if [ "${answer%% *}" = 200 ] && [ "$(json "$answer" sha256)" = "$sha_a" ] &&
	[ "$(find "$work/data/archives" -type f | wc -l)" = 1 ] &&
	[ "$(cat "$work/data/runs/m1/run1.json")" = "$record" ]; then
	ok "same run, same bytes again: 200, one archive, the record unchanged"
else
	not_ok "re-upload: $answer"
fi

python3 "$tool" archive good "$work/b.tar.zst" --machine m1 --run run1 --dir "$SRC/tests/aggregator" >/dev/null
answer=$(put run1 "$work/b.tar.zst")
if [ "${answer%% *}" = 409 ] && grep -qF "is stored with sha256 $sha_a" <<<"$answer" &&
	[ "$(find "$work/data/archives" -type f | wc -l)" = 1 ]; then
	ok "same run, other bytes: 409 naming the stored digest, nothing kept"
else
	not_ok "conflict: $answer"
fi

# Interrupted after 100 kB of 600 kB; the GET says how much arrived; the rest resumes.
head -c 600000 /dev/urandom >"$work/noise"
mkdir -p "$work/run2" && cp "$work/noise" "$work/run2/big.bin"
python3 "$tool" archive good "$work/c.tar.zst" --machine m1 --run run2 --dir "$work/run2" >/dev/null
sha_c=$(sha256sum "$work/c.tar.zst" | cut -d' ' -f1)
put run2 "$work/c.tar.zst" --stop-after 100000 >/dev/null
# partial_run RUN: GET says the run is partial with some bytes (the server saw the cut).
partial_run() { local a; a=$(get "$1"); [ "$(json "$a" state)" = partial ] && [ "$(json "$a" received)" -gt 0 ] 2>/dev/null; }
wait_until partial_run run2
answer=$(get run2)
received=$(json "$answer" received)
if [ "${answer%% *}" = 200 ] && [ "$(json "$answer" state)" = partial ] &&
	[ "$(json "$answer" sha256)" = "$sha_c" ] && [ "$received" -gt 0 ] && [ "$received" -le 100000 ]; then
	ok "interrupted upload: GET says partial, $received bytes received"
else
	not_ok "interrupted upload: $answer"
fi
answer=$(put run2 "$work/c.tar.zst" --from 1)
check "resume from byte 1 while $received are held and 0 is not: 201 (held bytes cut to 1) ($answer)" \
	test "${answer%% *}" = 201
# A resume that skips bytes the server never had is refused.
python3 "$tool" archive good "$work/d.tar.zst" --machine m1 --run run3 --dir "$work/run2" >/dev/null
put run3 "$work/d.tar.zst" --stop-after 50000 >/dev/null
wait_until partial_run run3
received=$(json "$(get run3)" received)
answer=$(put run3 "$work/d.tar.zst" --from $((received + 1000)))
check "resume past what the server holds: 416 ($answer)" test "${answer%% *}" = 416
answer=$(put run3 "$work/d.tar.zst" --from "$received")
sha_d=$(sha256sum "$work/d.tar.zst" | cut -d' ' -f1)
if [ "${answer%% *}" = 201 ] && cmp -s "$work/d.tar.zst" "$work/data/archives/$sha_d.tar.zst"; then
	ok "resume from the $received bytes confirmed: 201, the kept archive is byte for byte the client's"
else
	not_ok "resume: $answer"
fi

# A cut whose last bytes and close arrive together (a client killed mid-upload): serve sees the
# close at once, not at its idle timeout (60 s), so the machine's resume right after is taken
# rather than answered 503 "already in progress" for a minute.
python3 "$tool" archive good "$work/k.tar.zst" --machine m1 --run run7 --dir "$work/run2" >/dev/null
# cut_seen N: serve logged N cuts of run7 by its client.
cut_seen() { [ "$(grep -c "PUT /api/v1/machines/m1/runs/run7 - .*kept for a resume (client aborted)" "$work/server.log")" -ge "$1" ]; }
seen=0
for attempt in 1 2 3; do
	put run7 "$work/k.tar.zst" --stop-after $((20000 * attempt)) --at-once >/dev/null
	wait_until cut_seen "$attempt" && seen=$attempt
done
received=$(json "$(get run7)" received)
answer=$(put run7 "$work/k.tar.zst" --from "$received")
if [ "$seen" = 3 ] && [ "${answer%% *}" = 201 ]; then
	ok "cuts whose close comes with their last bytes: each seen at once, then the resume is 201"
else
	not_ok "cuts with their close at once: $seen of 3 seen within 20 s each; the resume: $answer"
fi

# SIGTERM while an upload is in flight: it finishes (201), then the server stops.
mkdir -p "$work/run4" && head -c 300000 /dev/urandom >"$work/run4/big.bin"
python3 "$tool" archive good "$work/e.tar.zst" --machine m1 --run run4 --dir "$work/run4" >/dev/null
put run4 "$work/e.tar.zst" --pause-after 100000 --pause 2 >"$work/e.answer" &
client=$!
wait_until part_has m1 run4
kill -TERM "$server_pid"
wait "$client"
wait "$server_pid"
server_status=$?
server_pid=
answer=$(cat "$work/e.answer")
if [ "${answer%% *}" = 201 ] && [ "$server_status" = 0 ] &&
	grep -q "stopping: 1 upload(s) in flight" "$work/server.log"; then
	ok "SIGTERM during an upload: the upload finishes (201), then exit 0"
else
	not_ok "SIGTERM during an upload: client '$answer', server status $server_status"
	diag <"$work/server.log"
fi

start_server
lost=
for run in run1 run2 run3 run4; do
	answer=$(get $run)
	[ "${answer%% *}" = 200 ] && [ "$(json "$answer" state)" = stored ] || lost="$lost $run"
done
for f in "$work"/data/archives/*.tar.zst; do
	[ "$(sha256sum "$f" | cut -d' ' -f1).tar.zst" = "$(basename "$f")" ] || lost="$lost $f"
done
check "restart: every acknowledged run stored, every archive matches its name${lost:+ (lost:$lost)}" test -z "$lost"

# SIGKILL in the middle of an upload: after a restart the GET says what arrived, the
# upload resumes from there, and the run is stored once with the client's exact bytes.
mkdir -p "$work/run5" && head -c 400000 /dev/urandom >"$work/run5/big.bin"
python3 "$tool" archive good "$work/g.tar.zst" --machine m1 --run run5 --dir "$work/run5" >/dev/null
sha_g=$(sha256sum "$work/g.tar.zst" | cut -d' ' -f1)
put run5 "$work/g.tar.zst" --pause-after 150000 --pause 3 >"$work/g.answer" 2>&1 &
client=$!
wait_until part_has m1 run5
kill -KILL "$server_pid"
wait "$server_pid" 2>/dev/null
server_pid=
wait "$client"
start_server
answer=$(get run5)
received=$(json "$answer" received)
if [ "$(json "$answer" state)" = partial ] && [ "$received" -gt 0 ] && [ "$received" -le 150000 ]; then
	ok "SIGKILL mid-upload, restart: partial, $received bytes confirmed"
else
	not_ok "SIGKILL mid-upload, restart: $answer"
fi
answer=$(put run5 "$work/g.tar.zst" --from "$received")
if [ "${answer%% *}" = 201 ] && cmp -s "$work/g.tar.zst" "$work/data/archives/$sha_g.tar.zst" &&
	[ "$(grep -c . "$work/data/runs/m1/run5.json")" = 1 ]; then
	ok "the upload resumed after the restart completes: 201, the archive byte for byte, one record"
else
	not_ok "resume after SIGKILL: $answer"
fi

# A real results directory: ingested into the store, its logs served by test name.
scenario=$SRC/tests/resultgen/scenarios/piglit-style-default-level
python3 "$tool" archive good "$work/real.tar.zst" --machine m1 --run real1 --dir "$scenario" >/dev/null
answer=$(put real1 "$work/real.tar.zst")
check "a results directory: 201 and ingested ($answer)" \
	test "${answer%% *}" = 201 -a "$(json "$answer" ingested)" = True
test_url=$(run_url m1 real1)/results/igt@successtest@first-subtest
for stream in out err dmesg; do
	curl -s -o "$work/$stream.got" "$test_url/$stream"
	check "GET .../results/igt@successtest@first-subtest/$stream: the job's $stream.txt" \
		cmp "$work/$stream.got" "$scenario/0/$stream.txt"
done
code=$(curl -s -o "$work/nope.got" -w '%{http_code}' "$(run_url m1 real1)/results/igt@nope@x/out")
check "GET of a test the run does not have: 404 ($(cat "$work/nope.got"))" test "$code" = 404
stop_server

# An accepted run whose ingest did not happen (its record says so) is ingested at the next start.
sed -i 's/"ingested": true/"ingested": false/' "$work/data/runs/m1/real1.json"
start_server
answer=$(get real1)
if [ "$(json "$answer" ingested)" = True ] &&
	grep -q "m1/real1: ingested (accepted before a restart)" "$work/server.log"; then
	ok "restart: an accepted run not yet ingested is ingested at start"
else
	not_ok "restart recovery: $answer"
fi
stop_server

# SIGTERM while a client has gone silent mid-upload (a machine powered off, its connection
# never closed): serve does not wait out the idle timeout (120 s) for it; what arrived is kept
# and the upload resumes after the restart.
start_server --idle-timeout 120
mkdir -p "$work/run6" && head -c 300000 /dev/urandom >"$work/run6/big.bin"
python3 "$tool" archive good "$work/h.tar.zst" --machine m1 --run run6 --dir "$work/run6" >/dev/null
put run6 "$work/h.tar.zst" --pause-after 100000 --pause 110 >/dev/null 2>&1 &
client=$!
wait_until part_has m1 run6
kill -TERM "$server_pid"
server_gone() { ! kill -0 "$server_pid" 2>/dev/null; }
if wait_until server_gone; then
	wait "$server_pid"
	server_status=$?
	if [ "$server_status" = 0 ] && grep -q "PUT /api/v1/machines/m1/runs/run6 .*kept for a resume" "$work/server.log"; then
		ok "SIGTERM with a client gone silent mid-upload: serve stops (exit 0) without waiting out the idle timeout, its bytes kept"
	else
		not_ok "SIGTERM with a silent client: exit $server_status"
		diag <"$work/server.log"
	fi
else
	not_ok "SIGTERM with a silent client: serve still running 20 s later"
	kill -KILL "$server_pid"
	wait "$server_pid"
fi
server_pid=
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
start_server
received=$(json "$(get run6)" received)
answer=$(put run6 "$work/h.tar.zst" --from "$received")
check "the silent client's upload resumes after the restart: 201 ($answer)" test "${answer%% *}" = 201
stop_server

# TLS: the same API over HTTPS with a certificate of our own.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
	-days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
start_server --cert "$work/cert.pem" --key "$work/key.pem"
https=https://127.0.0.1:$port
answer=$(curl -s --cacert "$work/cert.pem" "$https/api/v1/health")
check "TLS: health over HTTPS ($answer)" test "$answer" = '{"status": "ok"}'
python3 "$tool" archive good "$work/f.tar.zst" --machine m1 --run tls1 >/dev/null
code=$(curl -s -o "$work/f.answer" -w '%{http_code}' --cacert "$work/cert.pem" -T "$work/f.tar.zst" \
	-H "Authorization: Bearer token-of-m1" \
	-H "X-Bootci-Sha256: $(sha256sum "$work/f.tar.zst" | cut -d' ' -f1)" \
	"$https/api/v1/machines/m1/runs/tls1")
check "TLS: upload with curl over HTTPS: $code" test "$code" = 201
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/v1/health")
check "TLS: plain HTTP on the TLS port gets no answer (code $code)" test "$code" = 000
stop_server
check "no partial upload left over" test -z "$(find "$work/data/incoming" -type f)"
done_testing

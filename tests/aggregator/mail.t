#!/usr/bin/env bash
# The master's mail against a real SMTP server: aiosmtpd on 127.0.0.1 (as `nobody` when this
# runs as root) with a handler, written here, that saves each message as it received it
# (envelope.original_content) and answers each DATA as its plan file says.
#   reply      `mail queue --build` queues the build's reply once (threaded on its Message-ID,
#              to the list and the author); `mail send` delivers it: the bytes received are
#              report --mbox's message with CRLF lines, byte for byte; a second pass sends nothing
#   dots       a message of lines starting with dots arrives as queued (libcurl's dot-stuffing)
#   451        refused for now, then taken: retried after its delay (doubled each time),
#              received once; past retry-for: failed
#   drop       the connection closed before the answer to DATA, and a server that cuts the
#              connection in the middle of DATA: retried later, received once
#   550        refused for good: failed, said once, kept (mail list), never tried again
#   STARTTLS   a server with a self-signed certificate that requires STARTTLS, the CA file in
#              mail.conf: received byte for byte
#   AUTH       a server that requires AUTH (aiosmtpd's Controller: its command line has no
#              AUTH): a wrong password in the auth file is retried, the right one sends
#   serve      serve's sender thread delivers what is queued, within its interval; with
#              reply = final it queues the reply of a build whose jobs have all ended; serve
#              stopped while a server keeps a delivery waiting stops at once, the message kept
# Skipped when python3-aiosmtpd is not installed.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

python=/usr/bin/python3
if ! "$python" -c 'import aiosmtpd' 2>/dev/null; then
	echo "1..0 # SKIP python3-aiosmtpd (Debian package) not installed"
	exit 0
fi

gen=$SRC/tests/aggregator/report-runs.py
data=$work/data
smtp=$work/smtp
mkdir -p "$data" "$smtp/received" "$work/tls/received"
: >"$work/tokens"
chmod 0755 "$work"

# A server that takes a message up to DATA, reads a few bytes of it and cuts the connection.
cat >"$work/cut.py" <<'PY'
import socket
import sys

listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", int(sys.argv[1])))
listener.listen()


def serve(conn):
    lines = conn.makefile("rb")
    conn.sendall(b"220 cut ESMTP\r\n")
    for line in lines:
        verb = line[:4].upper()
        if verb == b"DATA":
            conn.sendall(b"354 go ahead\r\n")
            lines.read(40)
            with open(sys.argv[2], "a") as f:
                f.write("cut\n")
            break
        conn.sendall(b"221 bye\r\n" if verb == b"QUIT" else b"250 ok\r\n")
    lines.close()


while True:
    conn, _ = listener.accept()
    try:
        serve(conn)
    except OSError:
        pass  # a probe that connected and left
    conn.close()
PY

tcp_free_port() {
	"$python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}
listening() { (: >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

run_as=()
if [ "$(id -u)" = 0 ]; then
	run_as=(setpriv --reuid nobody --regid nogroup --clear-groups --)
fi
smtp_pids=()
cleanup_smtp() {
	local pid
	for pid in "${smtp_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	cleanup
}
trap cleanup_smtp EXIT

# smtpd DIR PORT [aiosmtpd options...]: aiosmtpd saving into DIR, as nobody when root.
smtpd() {
	local dir=$1 port=$2
	shift 2
	[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$dir"
	(cd "$dir" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$SRC/tests/aggregator exec "${run_as[@]}" "$python" -m aiosmtpd -n \
		-l "127.0.0.1:$port" "$@" -c smtp_save.Save "$dir") >>"$dir/server.log" 2>&1 &
	smtp_pids+=($!)
	wait_until listening "$port"
}

smtp_port=$(tcp_free_port)
if ! smtpd "$smtp" "$smtp_port"; then
	echo "Bail out! aiosmtpd did not start:"
	diag <"$smtp/server.log"
	exit 1
fi

# config URL [more lines]: DATA/mail.conf for the server at URL.
config() {
	printf 'url = %s\nfrom = bootci <ci@lab.example>\nto = intel-gfx <gfx@lists.example>\n' \
		"$1" >"$data/mail.conf"
	printf 'retry-first = 1s\ntimeout = 10s\n%s' "${2:-}" >>"$data/mail.conf"
}
config "smtp://127.0.0.1:$smtp_port/lab.example"
export BOOTCI_DATA=$data

mail() { "$aggregator" mail "$@"; }
received() { find "$1/received" -name '*.eml' | wc -l; }
# state MESSAGE-ID: its state in `mail list`
state() { mail list | awk -F'\t' -v id="$1" '$1 == id { print $2 }'; }

# ---- a build's reply ----
"$gen" "$work/runs/base" kms_flip@basic=pass gem@a=pass >/dev/null
"$gen" "$work/runs/series" kms_flip@basic=fail gem@a=pass >/dev/null
{
	"$aggregator" build add base-1 --tree drm-tip --commit aaa --tier full --registered 1000 &&
		"$aggregator" ingest --machine lab-1 --build base-1 "$work/runs/base" &&
		"$aggregator" build add series-1 --tree patchwork --commit bbb --tier fast --base base-1 \
			--series-title 'drm/i915: a fix — v2' --message-id '<cover.1@lists.example>' \
			--registered 2000 &&
		"$aggregator" ingest --machine lab-1 --build series-1 "$work/runs/series"
} >>"$work/setup.log" 2>&1 || { echo "Bail out! the build did not register:"; diag <"$work/setup.log"; exit 1; }

mail queue --build series-1 --to 'Jane Doe <jane@doe.example>' --date 1764763200 \
	>"$work/queue.out" 2>&1
check "mail queue --build: exit 0" test $? = 0
reply_id=$(awk '{ print $1; exit }' "$work/queue.out")
check "... queued to the list and the author" \
	grep -q 'queued: to gfx@lists.example jane@doe.example' "$work/queue.out"
mail queue --build series-1 --to 'jane@doe.example' >"$work/queue2.out" 2>&1
check "queued again: exit 0, already in the outbox" grep -q "already in the outbox" "$work/queue2.out"
check "... one message in the outbox" test "$(mail list | wc -l)" = 1

mail send >"$work/send1.out" 2>"$work/send1.err"
check "mail send: exit 0, 1 sent" grep -q '^mail: 1 sent, 0 to retry, 0 failed' "$work/send1.out"
check "the server received one message" test "$(received "$smtp")" = 1
"$aggregator" report --build series-1 --mbox "$work/reply.mbox" --date 1764763200 \
	--from 'bootci <ci@lab.example>' --to 'intel-gfx <gfx@lists.example>, Jane Doe <jane@doe.example>' \
	>>"$work/setup.log" 2>&1
# report --mbox's message as SMTP carries it: no From_ line nor the mbox's last blank line, CRLF.
"$python" - "$work/reply.mbox" "$work/reply.eml" <<'PY'
import re, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[0].startswith(b"From ") and lines[-1] == b"" and lines[-2] == b""
body = [re.sub(rb"^>(>*From )", rb"\1", l) for l in lines[1:-2]]
open(sys.argv[2], "wb").write(b"".join(l + b"\r\n" for l in body))
PY
check "... byte for byte report --mbox's message with CRLF line ends" \
	cmp "$work/reply.eml" "$smtp/received/1.eml"
mail show "$reply_id" >"$work/stored.eml"
check "... and the message the outbox kept" cmp "$work/stored.eml" "$smtp/received/1.eml"
check "... threaded on the series' Message-ID" \
	grep -q $'^In-Reply-To: <cover.1@lists.example>\r$' "$smtp/received/1.eml"
check "... envelope from the configured sender to the list and the author" \
	test "$(tr '\n' ' ' <"$smtp/received/1.env")" = "ci@lab.example gfx@lists.example jane@doe.example "
check "mail list: sent" test "$(state "$reply_id")" = sent
mail send >"$work/send2.out" 2>&1
check "a second pass sends nothing" grep -q '^mail: 0 sent, 0 to retry, 0 failed' "$work/send2.out"
check "... the server still has one message" test "$(received "$smtp")" = 1

# ---- a message of its own: dots, and the server's refusals ----
# message ID: a message file whose body has the lines SMTP's dot-stuffing must survive.
message() {
	printf 'From: bootci <ci@lab.example>\nTo: gfx@lists.example\nSubject: %s\nMessage-ID: <%s@lab.example>\n\n.\n..\n.dot\nFrom the start\nend\n' \
		"$1" "$1" >"$work/$1.txt"
}
message dots
mail queue --message "$work/dots.txt" >>"$work/log" 2>&1
mail send >>"$work/log" 2>&1
printf 'From: bootci <ci@lab.example>\r\nTo: gfx@lists.example\r\nSubject: dots\r\nMessage-ID: <dots@lab.example>\r\n\r\n.\r\n..\r\n.dot\r\nFrom the start\r\nend\r\n' \
	>"$work/dots.eml"
check "lines starting with dots arrive as queued" cmp "$work/dots.eml" "$smtp/received/2.eml"

message later
printf '451\n' >"$smtp/plan"
mail queue --message "$work/later.txt" >>"$work/log" 2>&1
mail send >"$work/later1.out" 2>"$work/later1.err"
check "451: not sent, to retry" grep -q '^mail: 0 sent, 1 to retry, 0 failed' "$work/later1.out"
check "... the log line says the server's answer" grep -q '451 4.3.0 the test says later' "$work/later1.err"
check "... still queued" test "$(state '<later@lab.example>')" = queued
mail send >"$work/later2.out" 2>&1
check "... not due before its delay" grep -q '^mail: 0 sent, 0 to retry' "$work/later2.out"
sleep 1.2
mail send >"$work/later3.out" 2>&1
check "... sent after it" grep -q '^mail: 1 sent' "$work/later3.out"
check "... received once" test "$(grep -l 'Message-ID: <later@' "$smtp"/received/*.eml | wc -l)" = 1

message twice
printf '451\n451\n' >"$smtp/plan"
mail queue --message "$work/twice.txt" >>"$work/log" 2>&1
mail send >>"$work/log" 2>"$work/twice1.err"
sleep 1.2
mail send >>"$work/log" 2>"$work/twice2.err"
check "backoff: retried in 1 s, then in 2 s" \
	bash -c "grep -q 'attempt 1), retried in 1 s' '$work/twice1.err' &&
		grep -q 'attempt 2), retried in 2 s' '$work/twice2.err'"
sleep 2.2
mail send >>"$work/log" 2>&1
check "... then sent, received once" \
	test "$(grep -l 'Message-ID: <twice@' "$smtp"/received/*.eml | wc -l)" = 1

message dropped
printf 'drop\n' >"$smtp/plan"
mail queue --message "$work/dropped.txt" >>"$work/log" 2>&1
mail send >"$work/drop1.out" 2>"$work/drop1.err"
check "connection closed before the answer to DATA: to retry" \
	grep -q '^mail: 0 sent, 1 to retry' "$work/drop1.out"
sleep 1.2
mail send >>"$work/log" 2>&1
check "... sent on the next pass, received once" \
	test "$(grep -l 'Message-ID: <dropped@' "$smtp"/received/*.eml | wc -l)" = 1

cut_port=$(tcp_free_port)
"$python" "$work/cut.py" "$cut_port" "$work/cut.log" >"$work/cut.out" 2>&1 &
smtp_pids+=($!)
wait_until listening "$cut_port"
message cut
config "smtp://127.0.0.1:$cut_port/lab.example"
mail queue --message "$work/cut.txt" >>"$work/log" 2>&1
mail send >"$work/cut1.out" 2>"$work/cut1.err"
check "connection cut in the middle of DATA: to retry" grep -q '^mail: 0 sent, 1 to retry' "$work/cut1.out"
check "... the cut happened in DATA" grep -qx cut "$work/cut.log" || diag <"$work/cut1.err"
check "... still queued" test "$(state '<cut@lab.example>')" = queued
config "smtp://127.0.0.1:$smtp_port/lab.example"
sleep 1.2
mail send >>"$work/log" 2>&1
check "... sent to the working server later, received once" \
	test "$(grep -l 'Message-ID: <cut@' "$smtp"/received/*.eml | wc -l)" = 1

message expired
config "smtp://127.0.0.1:$smtp_port/lab.example" "retry-for = 1s
"
printf '451\n' >"$smtp/plan"
mail queue --message "$work/expired.txt" >>"$work/log" 2>&1
mail send >"$work/expired.out" 2>"$work/expired.err"
check "refused for now past retry-for: failed, saying so" \
	bash -c "grep -q '^mail: 0 sent, 0 to retry, 1 failed' '$work/expired.out' &&
		grep -q 'not sent in retry-for (1 s): 451 4.3.0' '$work/expired.err'"
config "smtp://127.0.0.1:$smtp_port/lab.example"

message refused
printf '550\n' >"$smtp/plan"
mail queue --message "$work/refused.txt" >>"$work/log" 2>&1
mail send >"$work/refused1.out" 2>"$work/refused1.err"
check "550: failed at once" grep -q '^mail: 0 sent, 0 to retry, 1 failed' "$work/refused1.out"
check "... said with the server's answer" \
	grep -q 'refused@lab.example.*kept as failed.*550 5.7.1 the test refuses' "$work/refused1.err"
sleep 1.2
mail send >"$work/refused2.out" 2>"$work/refused2.err"
check "... not tried again" test "$(grep -c 550 "$smtp/answers")" = 1
check "... nor said again" test ! -s "$work/refused2.err"
check "mail list shows it failed with the answer" \
	bash -c "$(declare -f mail); aggregator='$aggregator'; mail list | grep -q \$'^<refused@lab.example>\tfailed\t1\t.*550 5.7.1'"

# ---- STARTTLS with a self-signed certificate ----
tls_port=$(tcp_free_port)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" \
	>"$work/openssl.log" 2>&1
if smtpd "$work/tls" "$tls_port" --tlscert "$work/tls/cert.pem" --tlskey "$work/tls/key.pem"; then
	config "smtp://127.0.0.1:$tls_port/lab.example" \
		"$(printf 'starttls = required\nca-file = %s\n' "$work/tls/cert.pem")"
	message secure
	mail queue --message "$work/secure.txt" >>"$work/log" 2>&1
	mail send >"$work/tls.out" 2>"$work/tls.err"
	check "STARTTLS (the server requires it, its certificate checked): sent" \
		grep -q '^mail: 1 sent' "$work/tls.out" || diag <"$work/tls.err"
	mail show '<secure@lab.example>' >"$work/secure.eml"
	check "... received byte for byte" cmp "$work/secure.eml" "$work/tls/received/1.eml"
else
	not_ok "aiosmtpd with --tlscert did not start"
	diag <"$work/tls/server.log"
fi

# ---- AUTH, the credentials from a file ----
# An aiosmtpd that requires AUTH (PLAIN or LOGIN; over plain TCP, loopback only) with one user.
cat >"$work/authsmtp.py" <<'PY'
# authsmtp.py DIR PORT USER PASSWORD: saves as smtp_save.Save does, after AUTH as USER only;
# each AUTH's mechanism and outcome appended to DIR/auth.
import asyncio
import os
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

import smtp_save

directory, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def authenticator(server, session, envelope, mechanism, auth_data):
    good = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user
            and auth_data.password.decode() == password)
    with open(os.path.join(directory, "auth"), "a") as f:
        f.write("%s %s\n" % (mechanism, "good" if good else "bad"))
    # handled=False: aiosmtpd answers a refusal with its own 535.
    return AuthResult(success=good, handled=False)


controller = Controller(smtp_save.Save(directory), hostname="127.0.0.1", port=port,
                        authenticator=authenticator, auth_required=True,
                        auth_require_tls=False)
controller.start()
asyncio.get_event_loop().run_forever()
PY
mkdir -p "$work/auth/received"
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$work/auth"
auth_port=$(tcp_free_port)
(cd "$work/auth" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$work:$SRC/tests/aggregator exec "${run_as[@]}" "$python" "$work/authsmtp.py" "$work/auth" \
	"$auth_port" ci-bot 's3cret pass') >>"$work/auth/server.log" 2>&1 &
smtp_pids+=($!)
if wait_until listening "$auth_port"; then
	printf 'user = ci-bot\npassword = wrong\n' >"$work/smtp-auth"
	chmod 0600 "$work/smtp-auth"
	config "smtp://127.0.0.1:$auth_port/lab.example" "auth-file = $work/smtp-auth
"
	message authed
	mail queue --message "$work/authed.txt" >>"$work/log" 2>&1
	mail send >"$work/auth1.out" 2>"$work/auth1.err"
	check "AUTH refused (535): not sent, to retry (the auth file is the lab's to mend)" \
		grep -q '^mail: 0 sent, 1 to retry, 0 failed' "$work/auth1.out" || diag <"$work/auth1.err"
	printf 'user = ci-bot\npassword = s3cret pass\n' >"$work/smtp-auth"
	sleep 1.2
	mail send >"$work/auth2.out" 2>"$work/auth2.err"
	check "... with the right password from the file: sent" grep -q '^mail: 1 sent' "$work/auth2.out" ||
		diag <"$work/auth2.err"
	check "... the server saw a bad then a good AUTH" \
		test "$(awk '{ print $2 }' "$work/auth/auth" | tr '\n' ' ')" = "bad good "
	check "... received byte for byte" cmp <(mail show '<authed@lab.example>') "$work/auth/received/1.eml"
else
	not_ok "the AUTH server did not start"
	diag <"$work/auth/server.log"
fi

# ---- serve's sender ----
# series-2: its one job ended and its gate decided, as the scheduler records them (serve, with
# reply = final, queues its reply); series-1's reply is in the outbox already.
"$gen" "$work/runs/series-2" kms_flip@basic=pass gem@a=pass >/dev/null
{
	"$aggregator" build add series-2 --tree patchwork --commit ccc --tier fast --base base-1 \
		--series-title 'drm/i915: another' --message-id '<cover.2@lists.example>' \
		--registered 3000 &&
		"$aggregator" ingest --machine lab-1 --build series-2 "$work/runs/series-2"
} >>"$work/setup.log" 2>&1
"$python" - "$data/bootci.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for build, state in (("series-1", "done"), ("series-2", "done"), ("base-1", "abandoned")):
    db.execute("INSERT INTO schedule_jobs (machine, build, tier, shard, shards, testlist, run_id,"
               " state, boots, queued) SELECT m.id, b.id, 'fast', 0, 1, '', 'job-' || b.name, ?, 1, 0"
               " FROM machines m, builds b WHERE m.name = 'lab-1' AND b.name = ?", (state, build))
# The gates the scheduler decided once the fast tiers (and reruns) ended: a reply waits for its gate.
db.execute("INSERT INTO schedule_gates (build, decision, decided)"
           " SELECT id, 'skipped: the tree never runs it', 0 FROM builds WHERE name IN ('series-1', 'series-2')")
db.commit()
PY
config "smtp://127.0.0.1:$smtp_port/lab.example" "interval = 1s
reply = final
"
start_server
check "serve says its sender is on" \
	wait_until grep -q "mail: sending the outbox through smtp://127.0.0.1:$smtp_port" "$work/server.log" ||
	diag <"$work/server.log"
message served
mail queue --message "$work/served.txt" >>"$work/log" 2>&1
is_sent() { test "$(state "$1")" = sent; }
check "serve's sender delivers what is queued" wait_until is_sent '<served@lab.example>'
check "... received once" test "$(grep -l 'Message-ID: <served@' "$smtp"/received/*.eml | wc -l)" = 1
build_sent() { mail list | awk -F'\t' -v b="$1" '$6 == b && $2 == "sent"' | grep -q .; }
check "reply = final: serve queues the reply of a build whose jobs have all ended, and sends it" \
	wait_until build_sent series-2
check "... said in its log" grep -q 'mail: build series-2: its jobs have all ended: reply <bootci.series-2' \
	"$work/server.log"
reply2=$(grep -l 'cover.2@' "$smtp"/received/*.eml | head -n 1)
check "... threaded on its series' Message-ID" \
	grep -q $'^In-Reply-To: <cover.2@lists.example>\r$' "${reply2:-/dev/null}"
check "... one reply a build: none more for series-1, none for base-1 (no series)" \
	test "$(mail list | awk -F'\t' '$6 == "series-1" || $6 == "base-1"' | wc -l)" = 1
stop_server
check "serve stops with its sender (exit 0)" test "$server_status" = 0

# serve stopped while a delivery waits on a server that never answers: abandoned at once, kept.
cat >"$work/silent.py" <<'PY'
import socket
import sys
import time

listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", int(sys.argv[1])))
listener.listen()
kept = []
while True:
    conn, _ = listener.accept()
    kept.append(conn)
    with open(sys.argv[2], "a") as f:
        f.write("connected\n")
PY
silent_port=$(tcp_free_port)
"$python" "$work/silent.py" "$silent_port" "$work/silent.log" >"$work/silent.out" 2>&1 &
smtp_pids+=($!)
wait_until listening "$silent_port"
: >"$work/silent.log"
config "smtp://127.0.0.1:$silent_port/lab.example" "timeout = 20s
interval = 1s
"
message silent
mail queue --message "$work/silent.txt" >>"$work/log" 2>&1
start_server
wait_until grep -q connected "$work/silent.log"
started=$SECONDS
stop_server
check "serve stops at once with a delivery in flight (exit 0, within 5 s)" \
	test "$server_status" = 0 -a $((SECONDS - started)) -le 5
check "... the message stays queued" test "$(state '<silent@lab.example>')" = queued

mail queue --message "$work/dots.txt" --to jane@doe.example >"$work/usage.out" 2>&1
check "--to with --message: a usage error (exit 2) saying why" \
	bash -c "test $? = 2 && grep -q 'not with --message' '$work/usage.out'"
mail queue --build series-1 --to 'not an address' >"$work/usage2.out" 2>&1
check "--to that is not an address: a usage error (exit 2) naming it" \
	bash -c "test $? = 2 && grep -q \"'not an address': not an address\" '$work/usage2.out'"

printf 'url = smtp://x\nfrom = not an address\n' >"$data/mail.conf"
mail send >"$work/bad.out" 2>&1
check "a bad mail.conf: mail send fails (exit 1) naming the key" \
	bash -c "test $? = 1 && grep -q 'from' '$work/bad.out'"
rm -f "$data/mail.conf"
mail send >"$work/none.out" 2>&1
check "no mail.conf: mail send fails saying so" grep -q 'mail.conf' "$work/none.out"

done_testing

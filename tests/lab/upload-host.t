#!/usr/bin/env bash
# collect against a real master without the VM: `bootci-collect` on the host (the
# static musl binary the known-good image packs: its libcurl, and OpenSSL for https),
# on a results folder made here, uploading to `bootci-aggregator serve` on 127.0.0.1. The
# guest's side of the same story is upload.t and upload-kill.t; this one is quick and
# covers what they cannot afford: a wrong token, retention, a master SIGKILLed twice.
set -uo pipefail
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"

AGGREGATOR=$BUILD/host/bin/bootci-aggregator
COLLECT=$BUILD/musl/bin/bootci-collect
work=$BUILD/lab/upload-host
results=$work/results
master=$work/master
token=host-token-$$-$RANDOM
rm -rf "$work"
mkdir -p "$results/runs"
trap 'master_stop' EXIT

# run NAME STATE_LINE: a finished run in the single test program layout
make_run() {
	mkdir -p "$results/runs/$1/test" "$results/runs/$1/boot-0001"
	printf 'command /bin/true\n%s\n' "$2" >"$results/runs/$1/test/result.txt"
	printf 'boot 1\nkernel 6.1.0-test\ncmdline console=ttyS0 bootci.run_id=%s\n' "$1" \
		>"$results/runs/$1/boot-0001/boot.txt"
	printf 'kernel 6.1.0-test #1\nimage host-test\ntest /bin/true\n' >"$results/runs/$1/bootci-identity.txt"
	echo "output of $1" >"$results/runs/$1/test/out.txt"
}

collect() {
	"$COLLECT" --cmdline /dev/null --config /dev/null --results "$results" \
		--master "http://127.0.0.1:$port" --no-efi "$@" >>"$work/collect.log" 2>&1
}

plan 25
port=$(master_free_port)
master_token_line host-1 "$token" >"$work/tokens"
make_run r1 'state done'
make_run r2 'state done'
make_run busy 'state running'
printf 'machine = host-1\ntoken = %s\n' "$token" >"$results/bootci-machine.conf"
chmod 0644 "$results/bootci-machine.conf"

collect --deadline 5
check "a token file readable by others is refused" [ $? = 1 ]
check "...and said so" grep -q 'must be readable by its owner only' "$work/collect.log"
chmod 0600 "$results/bootci-machine.conf"

# The master down: everything stays, archived for the next time.
collect --deadline 2
check "master down: collect exits 1" [ $? = 1 ]
check "master down: both runs stay, archived" \
	eval "[ -d '$results/runs/r1' ] && [ -d '$results/runs/r2' ] && [ -s '$results/outgoing/r1.tar.zst' ] && [ -s '$results/outgoing/r2.tar.zst' ]"

check "master started" master_start "$master" "$port" "$work/tokens" "$work/master.log"

# A wrong token: refused (401), nothing deleted, nothing marked.
printf 'machine = host-1\ntoken = wrong\n' >"$results/bootci-machine.conf"
collect --deadline 10
check "a wrong token: collect exits 1" [ $? = 1 ]
check "a wrong token: HTTP 401, runs kept, none marked uploaded" \
	eval "grep -q 'HTTP 401' '$work/collect.log' && [ -d '$results/runs/r1' ] && ! ls '$results'/runs/*/bootci-uploaded.txt 2>/dev/null"
printf 'machine = host-1\ntoken = %s\n' "$token" >"$results/bootci-machine.conf"
chmod 0600 "$results/bootci-machine.conf"

# Uploaded, keep 1: the newer upload stays (marked), the other goes; the busy run is left alone.
collect --deadline 60 --keep 1
check "upload: collect exits 0" [ $? = 0 ]
check "the run in progress is left alone" \
	eval "[ -d '$results/runs/busy' ] && ! [ -e '$results/runs/busy/bootci-uploaded.txt' ] && grep -q 'run busy is in progress: left alone' '$work/collect.log'"
check "keep 1: one uploaded run kept and marked, the other deleted; outgoing empty" \
	eval "[ \"\$(ls '$results'/runs/*/bootci-uploaded.txt | wc -l)\" = 1 ] && [ \"\$(ls -d '$results'/runs/r* | wc -l)\" = 1 ] && [ -z \"\$(ls -A '$results/outgoing')\" ]"
kept=$(find "$results/runs" -mindepth 1 -maxdepth 1 -name "r*" | head -n 1)
sha=$(sed -n 's/^sha256 //p' "$kept/bootci-uploaded.txt")
state=$(master_run_state "$port" host-1 "$token" "$(basename "$kept")")
check "the master holds the kept run with the digest collect marked" \
	eval "python3 -c 'import json, sys; s = json.loads(sys.argv[1]); sys.exit(not (s[\"state\"] == \"stored\" and s[\"sha256\"] == sys.argv[2]))' '$state' '$sha'"

# The master SIGKILLed twice in the middle of one upload: one archive, byte for byte.
mkdir -p "$results/runs/big/test"
head -c $((48 * 1024 * 1024)) /dev/urandom >"$results/runs/big/test/out.txt"
printf 'command x\nstate done\nexit-status 0\n' >"$results/runs/big/test/result.txt"
tree_digests "$results/runs/big" >"$work/disk.sha256"
part=$master/incoming/host-1/big.part
# At most 16 MiB/s, so the cuts land where they are meant to whatever the host's speed.
( collect --deadline 120 --max-rate 16M ) &
collect_pid=$!
kills=0
for cut in $((8 * 1024 * 1024)) $((24 * 1024 * 1024)); do
	while kill -0 "$collect_pid" 2>/dev/null; do
		size=$(stat -c %s "$part" 2>/dev/null || echo 0)
		[ "$size" -ge "$cut" ] && break
		sleep 0.01
	done
	kill -0 "$collect_pid" 2>/dev/null || break
	master_kill
	kills=$((kills + 1))
	echo "master SIGKILLed holding $(stat -c %s "$part" 2>/dev/null) bytes" | diag
	sleep 1
	master_start "$master" "$port" "$work/tokens" "$work/master.log" || break
done
wait "$collect_pid"
status=$?
check "the master was killed twice in the middle of the upload" [ "$kills" = 2 ]
check "collect resumed and finished (exit 0)" \
	eval "[ $status = 0 ] && [ \"\$(grep -c 'collect: resuming: the master has [1-9]' '$work/collect.log')\" -ge 2 ]"
digest=$(sed -n 's/.*collect: run big uploaded: [0-9]* bytes, sha256 \([0-9a-f]\{64\}\).*/\1/p' "$work/collect.log")
master_stop
check "nothing doubled: no upload left in incoming/" eval "[ -z \"\$(find '$master/incoming' -type f 2>/dev/null)\" ]"
rm -rf "$work/unpacked" && mkdir -p "$work/unpacked"
tar --zstd -xf "$master/archives/$digest.tar.zst" -C "$work/unpacked" 2>&1 | diag
rm -f "$work/unpacked/manifest.json"
tree_digests "$work/unpacked" >"$work/master.sha256"
check "nothing lost: every file's sha256 on the master equals the disk's" diff -u "$work/disk.sha256" "$work/master.sha256"
# A bootci test program run has no igt_runner files: serve stores it and ingests it at once
# (its record says ingested, so no restart retries it).
check "the master recorded the run once, with that digest, ingested" python3 - \
	"$master/runs/host-1/big.json" "$digest" <<'PY'
import json, sys
record = json.load(open(sys.argv[1]))
sys.exit(record["sha256"] != sys.argv[2] or record["run_id"] != "big" or record["ingested"] is not True)
PY
check "...and serve never logged it as not ingested" eval "! grep -q 'not ingested' '$work/master.log'"

# HTTPS: serve with a certificate of its own; collect trusts it only through --ca-file (the
# known-good image names Debian's bundle the same way), and without it refuses and keeps the run.
# The certificate names the master by address (an iPAddress SAN), as a lab without DNS would.
tls=$work/tls
mkdir -p "$tls/results/runs"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>&1 | diag
tls_port=$(master_free_port)
"$AGGREGATOR" serve --data "$tls/master" --listen "127.0.0.1:$tls_port" --tokens "$work/tokens" \
	--cert "$tls/cert.pem" --key "$tls/key.pem" >>"$tls/master.log" 2>&1 &
MASTER_PID=$!
for _ in $(seq 100); do
	curl -fsS -o /dev/null --max-time 2 --cacert "$tls/cert.pem" \
		"https://127.0.0.1:$tls_port/api/v1/health" 2>/dev/null && break
	sleep 0.2
done
check "serve answers over HTTPS" \
	curl -fsS -o /dev/null --max-time 5 --cacert "$tls/cert.pem" "https://127.0.0.1:$tls_port/api/v1/health"
results=$tls/results
make_run t1 'state done'
printf 'machine = host-1\ntoken = %s\n' "$token" >"$results/bootci-machine.conf"
chmod 0600 "$results/bootci-machine.conf"
collect_tls() {
	"$COLLECT" --cmdline /dev/null --config /dev/null --results "$results" \
		--master "https://127.0.0.1:$tls_port" --no-efi "$@" >>"$tls/collect.log" 2>&1
}
collect_tls --deadline 3
check "https without --ca-file: collect exits 1" [ $? = 1 ]
check "...the certificate is not trusted, the run stays unmarked, the master has nothing" \
	eval "grep -qi 'certificate' '$tls/collect.log' && [ -d '$results/runs/t1' ] && ! [ -e '$results/runs/t1/bootci-uploaded.txt' ] && ! [ -e '$tls/master/runs/host-1/t1.json' ]"
: >"$tls/collect.log"
collect_tls --deadline 30 --ca-file "$tls/cert.pem" --keep 1
check "https with --ca-file: collect exits 0" [ $? = 0 ]
tls_digest=$(sed -n 's/.*collect: run t1 uploaded: [0-9]* bytes, sha256 \([0-9a-f]\{64\}\).*/\1/p' "$tls/collect.log")
check "...the run is marked uploaded with the digest the master recorded" python3 - \
	"$tls/master/runs/host-1/t1.json" "$tls_digest" "$results/runs/t1/bootci-uploaded.txt" <<'PY'
import json, sys
record = json.load(open(sys.argv[1]))
marked = open(sys.argv[3]).read()
sys.exit(not sys.argv[2] or record["sha256"] != sys.argv[2] or record["run_id"] != "t1"
         or ("sha256 " + sys.argv[2]) not in marked)
PY
state=$(curl -sS --max-time 10 --cacert "$tls/cert.pem" -H "Authorization: Bearer $token" \
	"https://127.0.0.1:$tls_port/api/v1/machines/host-1/runs/t1")
check "...and the master answers it stored over HTTPS" \
	python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1])["state"] != "stored")' "$state"
# The same CA named on the kernel command line, then in the machine file.
make_run t2 'state done'
printf 'console=ttyS0 bootci_collect.ca_file=%s\n' "$tls/cert.pem" >"$tls/cmdline"
collect_tls --deadline 30 --cmdline "$tls/cmdline" --keep 5
check "https with bootci_collect.ca_file= on the kernel command line: uploaded" \
	eval "[ $? = 0 ] && [ -e '$results/runs/t2/bootci-uploaded.txt' ] && [ -e '$tls/master/runs/host-1/t2.json' ]"
make_run t3 'state done'
printf 'machine = host-1\ntoken = %s\nca_file = %s\n' "$token" "$tls/cert.pem" >"$results/bootci-machine.conf"
collect_tls --deadline 30 --keep 5
check "https with ca_file in the machine file: uploaded" \
	eval "[ $? = 0 ] && [ -e '$results/runs/t3/bootci-uploaded.txt' ] && [ -e '$tls/master/runs/host-1/t3.json' ]"
master_stop
diag <"$work/collect.log"
diag <"$tls/collect.log"

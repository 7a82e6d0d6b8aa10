#!/usr/bin/env bash
# serve's limits refuse what is dangerous, never what the executor itself
# writes (issue 33, point 1): a run whose two jobs each print 40 MB of one
# repeated debug line packs a thousand times smaller and is still a run,
# taken whole; the same run past --max-unpacked is refused, kept on the
# machine by collect, and shown as refused on the master (/api/v1/refused,
# /refused, the front page, `bootci-aggregator machine refused`) until a
# limit raised lets it in.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

scenario=$SRC/tests/resultgen/scenarios/piglit-style-default-level
results=$work/results
mkdir -p "$results/runs"
printf 'machine = lab-01\ntoken = token-of-lab-01\n' >"$results/bootci-machine.conf"
chmod 600 "$results/bootci-machine.conf"
add_machine lab-01 token-of-lab-01
flood=40000000
line='igt_core-DEBUG: waiting for the engine to idle before the next submission'

collect() {
	"$BUILD/musl/bin/bootci-collect" --results "$results" --master "$base" --no-efi --config /dev/null \
		--cmdline /dev/null --deadline 60s >>"$work/collect.log" 2>&1
}

# flood_run NAME: a finished run of two jobs, each of whose out.txt ends with $flood bytes of
# one debug line repeated, as a test that logs in a loop leaves it.
flood_run() {
	local run=$results/runs/$1
	cp -r "$scenario" "$run"
	cp -r "$run/0" "$run/1"
	sed -i 's/first-subtest/second-subtest/' "$run"/1/*
	echo 'successtest second-subtest' >>"$run/joblist.txt"
	for job in 0 1; do
		yes "$line" | head -c "$flood" >>"$run/$job/out.txt"
	done
	echo done >"$run/bootci-journal.txt"
}

# The executor's own cap lets a job write that much (its default output_limit).
cap=$("$BUILD/musl/bin/bootci-executor" --help-config | sed -n "s/^output_limit .*(default: '\([0-9]*\)M').*/\1/p")
if [ -n "$cap" ] && [ $((cap * 1048576)) -gt $((flood + 4096)) ]; then
	ok "a job's out.txt of $flood bytes is within the executor's default output_limit (${cap}M)"
else
	not_ok "the executor's default output_limit ('$cap' MiB) is below the flood of $flood bytes"
fi

# Serve's defaults take it whole.
flood_run flood1
start_server
collect
status=$?
size=$(sed -n 's/.*run flood1 uploaded: \([0-9]*\) bytes.*/\1/p' "$work/collect.log")
if [ "$status" = 0 ] && [ ! -e "$results/runs/flood1" ] && [ -n "$size" ] &&
	grep -q "PUT /api/v1/machines/lab-01/runs/flood1 201 .*stored and ingested" "$work/server.log" &&
	curl -s "$base/api/v1/refused" | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["refused"] != [])'; then
	ok "2 x $flood bytes of one line in a $size-byte archive: stored and ingested, nothing refused"
else
	not_ok "the flood run under serve's defaults: collect exit $status"
	diag <"$work/collect.log"
	grep flood1 "$work/server.log" | diag
fi
stop_server

# Past --max-unpacked: refused, kept on the machine, shown on the master.
flood_run flood2
start_server --max-unpacked 64M
: >"$work/collect.log"
collect
status=$?
reason="more than 67108864 bytes once unpacked (the limit)"
if [ "$status" = 1 ] && [ -d "$results/runs/flood2" ] && [ ! -e "$results/runs/flood2/bootci-uploaded.txt" ] &&
	grep -q "PUT /api/v1/machines/lab-01/runs/flood2 422 .*$reason" "$work/server.log" &&
	grep -q "run flood2 not uploaded: .*$reason" "$work/collect.log" &&
	grep -q "it stays on the partition" "$work/collect.log"; then
	ok "past --max-unpacked 64M: 422 '$reason', the run stays on the machine"
else
	not_ok "past --max-unpacked: collect exit $status"
	diag <"$work/collect.log"
	grep flood2 "$work/server.log" | diag
fi
curl -s "$base/api/v1/refused" >"$work/refused.json"
if python3 - "$work/refused.json" "$reason" <<'EOF'
import json, re, sys, time
refused = json.load(open(sys.argv[1]))["refused"]
assert len(refused) == 1, refused
r = refused[0]
assert (r["machine"], r["run_id"], r["count"]) == ("lab-01", "flood2", 1), r
assert re.fullmatch("[0-9a-f]{64}", r["sha256"]), r
assert 0 < r["size"] < 1 << 20, r
assert sys.argv[2] in r["reason"], r
assert abs(time.time() - r["time"]) < 600, r
EOF
then
	ok "/api/v1/refused: machine, run, digest, size, reason, time, count"
else
	not_ok "/api/v1/refused"
	diag <"$work/refused.json"
fi
sha=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["refused"][0]["sha256"])' "$work/refused.json" 2>/dev/null)
front=$(curl -s "$base/")
page=$(curl -s "$base/refused")
if grep -q 'refused uploads' <<<"$front" && grep -q "$sha" <<<"$front" && grep -qF "$reason" <<<"$front" &&
	grep -q "$sha" <<<"$page" && grep -q 'flood2' <<<"$page"; then
	ok "the front page and /refused show the refusal"
else
	not_ok "the refusal on the pages"
	diag <<<"$front"
fi
"$aggregator" machine refused --data "$work/data" >"$work/refused.txt" 2>&1
"$aggregator" machine refused lab-02 --data "$work/data" >"$work/refused-other.txt" 2>&1
"$aggregator" machine refused lab-01 --json --data "$work/data" >"$work/refused-cli.json" 2>&1
if grep -Eq "^[0-9-]{10}T[0-9:]{8}Z lab-01 flood2 sha256:$sha [0-9]+ bytes, refused 1 time: entry " "$work/refused.txt" &&
	grep -qF "$reason" "$work/refused.txt" &&
	[ "$(wc -l <"$work/refused.txt")" = 1 ] && [ ! -s "$work/refused-other.txt" ] &&
	cmp -s "$work/refused-cli.json" "$work/refused.json"; then
	ok "bootci-aggregator machine refused [NAME] [--json] lists it as the API does"
else
	not_ok "bootci-aggregator machine refused"
	diag <"$work/refused.txt"
	diag <"$work/refused-cli.json"
fi
stop_server

# The limit raised: the next collect sends it again, serve takes it, the record goes.
start_server
: >"$work/collect.log"
collect
status=$?
"$aggregator" machine refused --data "$work/data" >"$work/refused.txt" 2>&1
if [ "$status" = 0 ] && [ ! -e "$results/runs/flood2" ] && [ ! -s "$work/refused.txt" ] &&
	grep -q "PUT /api/v1/machines/lab-01/runs/flood2 201 .*stored and ingested" "$work/server.log"; then
	ok "the limit raised: the next collect's upload is stored and no longer shown as refused"
else
	not_ok "after the limit raised: collect exit $status"
	diag <"$work/collect.log"
	diag <"$work/refused.txt"
fi
stop_server
done_testing

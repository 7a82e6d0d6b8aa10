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
	"$BUILD/musl/bin/bootci-collect" --results "$results" --master "$1" --no-efi --config /dev/null \
		--cmdline /dev/null --deadline "${2:-60s}" >>"$work/collect.log" 2>&1
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
done_testing

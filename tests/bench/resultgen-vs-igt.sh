#!/usr/bin/env bash
# Bench: the results generator alone (bootci-results, the same code as
# `bootci-aggregator results` in a static binary, as igt_results is beside
# igt_runner) against IGT's igt_results on the same synthetic igt_runner folders of N jobs
# (tests/bench/igt-synthetic.py), both in the same run: for each N, the median
# of R runs of each, the two tools' runs taking turns (the machine may be
# shared: both meet the same load), in wall seconds and in CPU seconds (user +
# system), each tool's peak memory, and the ratios igt_results / bootci. The two results.json must
# give the same verdicts (tests/lab/igt-compare.py); the byte-for-byte
# comparison is the conformance tests' (tests/resultgen/conformance.t).
#
# usage: tests/bench/resultgen-vs-igt.sh [BUILD_DIR] [N...]   (default N: 10000 30000)
#   RUNS=R (default 3); RESULTS=path runs another bootci-results, AGGREGATOR=path
#   `AGGREGATOR results` instead (an older build, or the aggregator's own command).
set -uo pipefail
build=$(realpath "${1:-build}")
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 30000)
src=$(cd "$(dirname "$0")/../.." && pwd)
ours_cmd=("${RESULTS:-$build/host/bin/bootci-results}")
[ -z "${AGGREGATOR:-}" ] || ours_cmd=("$AGGREGATOR" results)
igt_results=$build/igt/build/runner/igt_results
runs=${RUNS:-3}
if [ ! -x "$igt_results" ]; then
	echo "resultgen-vs-igt: skipped: no igt_results (make builds it when ../shared/igt/ holds IGT's source)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run of a command: "wall cpu kib" (seconds, seconds user + system, peak KiB).
one_run() {
	local wall user sys kib
	/usr/bin/time -o "$work/time" -f '%e %U %S %M' "$@" >/dev/null 2>&1 || return 1
	read -r wall user sys kib <"$work/time" || return 1
	echo "$wall $(printf "%.2f" "$(echo "$user + $sys" | bc -l)") $kib"
}

# "wall cpu kib" triples one after another: the median of each column.
column_medians() {
	local w=() c=() k=()
	while [ $# -ge 3 ]; do
		w+=("$1") c+=("$2") k+=("$3")
		shift 3
	done
	[ ${#w[@]} -eq "$runs" ] || return 1
	echo "$(median "${w[@]}") $(median "${c[@]}") $(median "${k[@]}")"
}

median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf 'resultgen-vs-igt: %s against igt_results, median of %d runs; ratios are igt_results / bootci (higher: bootci better)\n' \
	"${ours_cmd[*]##*/}" "$runs"
printf '%-7s %10s %10s %7s %10s %10s %7s %12s %12s %7s\n' jobs igt_wall_s wall_s ratio \
	igt_cpu_s cpu_s ratio igt_kib kib ratio
status=0
for n in "${sizes[@]}"; do
	python3 "$src/tests/bench/igt-synthetic.py" "$work/run-$n" "$n" || exit 1
	# Taking turns, one run of each at a time.
	igt=() ours=()
	for ((r = 0; r < runs; r++)); do
		# shellcheck disable=SC2207
		igt+=($(one_run "$igt_results" "$work/run-$n"))
		# shellcheck disable=SC2207
		ours+=($(one_run "${ours_cmd[@]}" "$work/run-$n" -o "$work/ours-$n.json"))
	done
	# shellcheck disable=SC2046
	set -- $(column_medians "${igt[@]}") $(column_medians "${ours[@]}")
	if [ $# -ne 6 ]; then
		echo "resultgen-vs-igt: $n jobs: a run failed"
		exit 1
	fi
	printf '%-7s %10s %10s %6.1fx %10s %10s %6.1fx %12s %12s %6.1fx\n' "$n" \
		"$1" "$4" "$(echo "$1 / ($4 + 0.005)" | bc -l)" \
		"$2" "$5" "$(echo "$2 / ($5 + 0.005)" | bc -l)" \
		"$3" "$6" "$(echo "$3 / $6" | bc -l)"
	if ! python3 "$src/tests/lab/igt-compare.py" "$work/ours-$n.json" "$work/run-$n/results.json" \
		single text | grep -q '^unexplained 0$'; then
		echo "resultgen-vs-igt: $n jobs: the two generators disagree on verdicts"
		status=1
	fi
	rm -rf "$work/run-$n" "$work/ours-$n.json"
done
exit $status

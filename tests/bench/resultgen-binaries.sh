#!/usr/bin/env bash
# Bench: the results generator on a joblist of N distinct test binaries that
# never ran (no job folders: notrun, so that the per-binary table is what
# costs; it used to be searched linearly and grown by one, time growing with
# the square of N). Prints the seconds `bootci-aggregator results` takes for
# each N and the time per job against the smallest N's; then the same for one job of N/4
# subtests (each subtest's lines used to be searched for through the whole out.txt).
#
# usage: tests/bench/resultgen-binaries.sh [BUILD_DIR] [N...]   (default N: 40000 160000 640000)
# AGGREGATOR=path runs another bootci-aggregator binary (an older build, to compare).
set -euo pipefail
build=$(realpath "${1:-build}")
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(40000 160000 640000)
aggregator=${AGGREGATOR:-$build/host/bin/bootci-aggregator}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_run() {
	local dir=$1 n=$2
	mkdir -p "$dir"
	printf 'name : bench\n' >"$dir/metadata.txt"
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "bin_%07d\n", i }' >"$dir/joblist.txt"
}

first_per_job=
for n in "${sizes[@]}"; do
	make_run "$work/run-$n" "$n"
	start=$(date +%s.%N)
	"$aggregator" results "$work/run-$n" -o "$work/results-$n.json"
	end=$(date +%s.%N)
	seconds=$(echo "$end - $start" | bc -l)
	per_job=$(echo "$seconds / $n" | bc -l)
	[ -n "$first_per_job" ] || first_per_job=$per_job
	printf 'resultgen: %6d distinct binaries: %.2f s (%.1f us per job, %.2fx the first size'"'"'s)\n' \
		"$n" "$seconds" "$(echo "$per_job * 1000000" | bc -l)" "$(echo "$per_job / $first_per_job" | bc -l)"
	rm -rf "$work/run-$n" "$work/results-$n.json"
done

# One job with N/4 subtests (each with a dynamic subtest): each subtest's
# lines used to be searched for through all of out.txt.
first_per_job=
for n in "${sizes[@]}"; do
	subtests=$((n / 4))
	dir=$work/subtests-$subtests
	mkdir -p "$dir/0"
	printf 'name : bench\n' >"$dir/metadata.txt"
	printf 'bin\n' >"$dir/joblist.txt"
	awk -v n="$subtests" 'BEGIN { for (i = 0; i < n; i++) printf "s%d\n", i; print "exit:0 (1.000s)" }' \
		>"$dir/0/journal.txt"
	awk -v n="$subtests" 'BEGIN { for (i = 0; i < n; i++)
		printf "Starting subtest: s%d\nStarting dynamic subtest: d\nDynamic subtest d: SUCCESS (0.1s)\nSubtest s%d: SUCCESS (0.1s)\n", i, i }' \
		>"$dir/0/out.txt"
	: >"$dir/0/err.txt"
	: >"$dir/0/dmesg.txt"
	start=$(date +%s.%N)
	"$aggregator" results "$dir" -o "$work/results.json"
	end=$(date +%s.%N)
	seconds=$(echo "$end - $start" | bc -l)
	per_job=$(echo "$seconds / $subtests" | bc -l)
	[ -n "$first_per_job" ] || first_per_job=$per_job
	printf 'resultgen: %6d subtests in one job: %.2f s (%.2fx the first size'"'"'s time per subtest)\n' \
		"$subtests" "$seconds" "$(echo "$per_job / $first_per_job" | bc -l)"
	rm -rf "$dir" "$work/results.json"
done

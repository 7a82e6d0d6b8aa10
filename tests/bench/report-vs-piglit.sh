#!/usr/bin/env bash
# Bench: the CI master's day of results, side by side in one run on the same
# results. Ours: `bootci-aggregator ingest` of RUNS archives (one per
# machine) into a fresh SQLite store, then `report` of that build against its
# baseline (the regressions, the reply and the test matrix HTML). Debian's
# piglit: `piglit summary html` and `piglit summary console` over the same
# runs' results.json (written by our results generator). Wall time and peak
# memory of each, and the ratios. Both write a page per result beside the
# matrix (piglit's test_result pages, our MACHINE/N.html), so the html lines
# compare like with like; the reply alone is measured too. Issue 12's load:
# 40 runs of 10k results (Intel's 400k results a day in 2017).
#
# The baseline build (the same machines' runs of the base tree, as many
# results) is ingested before the clock starts: the timed store holds it, as
# a master's does. piglit is installed with apt-get (through sudo when not
# root) only when it is absent, never by make check.
#
# usage: tests/bench/report-vs-piglit.sh [BUILD_DIR] [RUNS] [RESULTS]   (make bench runs it)
#        AGGREGATOR=path overrides the aggregator measured (an older build, for a before/after).
set -euo pipefail
build=$(realpath "${1:-build}")
runs=${2:-40}
results=${3:-10000}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=${AGGREGATOR:-$build/host/bin/bootci-aggregator}

if ! command -v piglit >/dev/null 2>&1; then
	echo "bench: installing piglit (apt-get)" >&2
	sudo_cmd=()
	if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
	"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends piglit >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The baseline's runs, then the build's: the same tests, 20 changes per machine.
echo "bench: generating 2 x $runs runs of $results results" >&2
"$src/tests/bench/bench-runs.py" "$work/runs" "$runs" "$results" --prefix base
"$src/tests/bench/bench-runs.py" "$work/runs" "$runs" "$results" --prefix new --changed 20

# Archives as collect uploads them (ingest packs a folder), kept in a scratch data folder.
echo "bench: packing the runs and writing their results.json" >&2
mkdir -p "$work/json"
for dir in "$work"/runs/*/; do
	run=$(basename "$dir")
	machine=lab-${run##*-}
	"$aggregator" ingest --data "$work/pack" --machine "$machine" --run-id "$run" "$dir" \
		>"$work/pack.$run.txt"
	sed -n 's/.*(archive \(.*\))$/\1/p' "$work/pack.$run.txt" >"$work/archive.$run"
	case $run in new-*)
		mkdir "$work/json/$run"
		"$aggregator" results "$dir" -o "$work/json/$run/results.json" ;;
	esac
done
rm -rf "$work/runs"

data=$work/data
store=(--data "$data")
"$aggregator" build add base --tree bench --commit 0000000 --tier full "${store[@]}" \
	--registered 1700000000 >/dev/null
"$aggregator" build add new --tree bench-series --commit 1111111 --tier full --base base \
	--series-title "bench: the build under test" "${store[@]}" --registered 1700100000 >/dev/null
for f in "$work"/archive.base-*; do
	"$aggregator" ingest "${store[@]}" --build base "$(cat "$f")" >/dev/null
done
new_archives=()
for f in "$work"/archive.new-*; do new_archives+=("$(cat "$f")"); done

python3 - "$aggregator" "$work" "${#new_archives[@]}" "$results" "${new_archives[@]}" <<'PY'
import glob, os, resource, subprocess, sys, time
aggregator, work, runs, results = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
archives = sys.argv[5:]
data = os.path.join(work, "data")


def timed(commands):
    """Wall time of the commands one after the other, and the largest peak RSS (MiB) among them."""
    peak = 0
    start = time.monotonic()
    for c in commands:
        proc = subprocess.Popen(c, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            sys.exit(f"bench: {' '.join(c)} failed ({status})")
        peak = max(peak, usage.ru_maxrss / 1024)
    return time.monotonic() - start, peak


jsons = sorted(glob.glob(os.path.join(work, "json", "*", "results.json")))
ingest = timed([[aggregator, "ingest", "--data", data, "--build", "new", a] for a in archives])
reply = timed([[aggregator, "report", "--data", data, "--build", "new", "--date", "1700200000",
                "--mbox", os.path.join(work, "reply.mbox")]])
report = timed([[aggregator, "report", "--data", data, "--build", "new", "--date", "1700200000",
                 "--mbox", os.path.join(work, "reply.mbox"),
                 "--html", os.path.join(work, "html")]])
html = timed([["piglit", "summary", "html", "--overwrite", os.path.join(work, "piglit-html")]
              + jsons])
console = timed([["piglit", "summary", "console"] + jsons])
# The floor of any writer of a page per result on this file system: that many 2 KiB files.
floor_dir = os.path.join(work, "floor")
os.mkdir(floor_dir)
start = time.monotonic()
for i in range(runs * results):
    with open(os.path.join(floor_dir, f"{i}.html"), "w") as f:
        f.write("x" * 2048)
floor = time.monotonic() - start

ours = (ingest[0] + report[0], max(ingest[1], report[1]))
print(f"report bench: {runs} runs x {results} results ({runs * results} results)")
print(f"  bootci ingest ({runs} archives)            {ingest[0]:8.2f} s   peak {ingest[1]:7.1f} MiB")
print(f"  bootci report: regressions + reply     {reply[0]:8.2f} s   peak {reply[1]:7.1f} MiB")
print(f"  bootci report: the same + matrix html  {report[0]:8.2f} s   peak {report[1]:7.1f} MiB")
print(f"  bootci ingest + report (with html)     {ours[0]:8.2f} s   peak {ours[1]:7.1f} MiB")
print(f"  piglit summary html                    {html[0]:8.2f} s   peak {html[1]:7.1f} MiB")
print(f"  piglit summary console                 {console[0]:8.2f} s   peak {console[1]:7.1f} MiB")
print(f"  one 2 KiB file per result, alone       {floor:8.2f} s   (any page-per-result writer's floor)")
print(f"  piglit html / bootci                   {html[0] / ours[0]:8.1f} x faster, "
      f"{html[1] / ours[1]:5.1f} x less memory (target 25 x, 5 x)")
print(f"  piglit console / bootci                {console[0] / ours[0]:8.1f} x faster, "
      f"{console[1] / ours[1]:5.1f} x less memory")
PY

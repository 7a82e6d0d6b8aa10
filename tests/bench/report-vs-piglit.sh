#!/usr/bin/env bash
# Bench: the CI master's day of results, side by side in one run on the same
# results. Ours: `bootci-aggregator ingest` of RUNS archives (one per
# machine) into a fresh SQLite store, then `report` of that build against its
# baseline: the regressions, the reply and the test matrix HTML whose cells
# link to serve's result pages (issue 12's "ingest + the matrix and
# regression report"). Debian's piglit: `piglit summary html` and `piglit
# summary console` over the same runs' results.json (written by our results
# generator from the same folders). Wall time and peak memory (the largest
# RSS of any one process, as getrusage gives it) of each, and both ratios.
# Also measured, not in the ratio: the report writing a static page per
# result as piglit html does (`report --html` without --results-url), beside
# the floor of any such writer (that many 2 KiB files). The ratio's parts
# are timed three times each, taking turns, every step after a sync, and
# their medians compared. Before the numbers, the bench checks that both
# sides hold the same results: the count per status in the store equals the
# count in the results.json piglit reads.
# Issue 12's load: 40 runs of 10k results (Intel's 400k results a day in 2017).
# The build's archives are ingested as serve ingests uploads: its default
# --workers at a time (`ingest --jobs auto`: the CPUs this process may run on,
# plus one, serve's bci_serve_default_workers()), threads of one process each with
# its own store connection (`ingest --jobs`); the same archives ingested one
# after the other (into a copy of the store) are timed beside it.
#
# The baseline build (the same machines' runs of the base tree, as many
# results) is ingested before the clock starts: the timed store holds it, as
# a master's does. piglit is installed with apt-get (through sudo when not
# root) only when it is absent, never by make check.
#
# usage: tests/bench/report-vs-piglit.sh [BUILD_DIR] [RUNS] [RESULTS]   (make bench runs it)
#        AGGREGATOR=path overrides the aggregator measured (an older build, for a before/after);
#        BENCH_MASTER_TUNABLES=VALUE its GLIBC_TUNABLES (default: the service unit's);
#        BENCH_KEEP=DIR keeps the store and the runs' archives there (for a profiler) instead
#        of a temporary folder removed at the end; BENCH_SCRATCH=DIR is where each run's folder
#        is written before it is packed (default /dev/shm, else the work folder);
#        BENCH_INGEST_JOBS=N ingests N archives at a time (default auto: `ingest --jobs
#        auto`, serve's default --workers, the CPUs plus one, at most 16);
#        BENCH_REPEAT=N times the ratio's parts (ingest N at a time, report with the matrix,
#        piglit summary html) N times each in turn and compares their medians (default 3);
#        BENCH_RUNS=DIR takes the runs (archives and results.json) an earlier BENCH_KEEP=DIR
#        kept, with the same RUNS and RESULTS, instead of generating them again (a before/after
#        on the same runs, without the 15 minutes of generating).
set -euo pipefail
build=$(realpath "${1:-build}")
runs=${2:-40}
results=${3:-10000}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=${AGGREGATOR:-$build/host/bin/bootci-aggregator}
# The master runs as its service unit runs it (aggregator/master/bootci-serve.service): with
# the unit's GLIBC_TUNABLES (malloc in transparent huge pages), read from the unit.
# BENCH_MASTER_TUNABLES=VALUE runs it with another value (empty: glibc's defaults), for a
# before/after. The peers (piglit, tar, curl) run with the environment as it is.
unit_tunables=$(sed -n 's/^Environment=GLIBC_TUNABLES=//p' "$src/aggregator/master/bootci-serve.service")
[ -n "$unit_tunables" ] || { echo "bench: no Environment=GLIBC_TUNABLES= in bootci-serve.service" >&2; exit 1; }
master_tunables=${BENCH_MASTER_TUNABLES-$unit_tunables}
# master ARGS...: the aggregator as the unit runs it
master() { GLIBC_TUNABLES=$master_tunables "$aggregator" "$@"; }

# The numbers given, checked before anything is installed or generated (minutes of work).
check_number() { # NAME VALUE MIN MAX
	case $2 in
	'' | *[!0-9]* | 0?* | ??????????*) ;;
	*) if [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then return 0; fi ;;
	esac
	echo "bench: $1=$2: not a number from $3 to $4" >&2
	exit 2
}
check_number RUNS "$runs" 1 1000
check_number RESULTS "$results" 1 1000000
# auto: serve's default --workers, which `ingest --jobs auto` works out itself.
ingest_jobs=${BENCH_INGEST_JOBS:-auto}
[ "$ingest_jobs" = auto ] || check_number BENCH_INGEST_JOBS "$ingest_jobs" 1 64
check_number BENCH_REPEAT "${BENCH_REPEAT:-3}" 1 20

if ! command -v piglit >/dev/null 2>&1; then
	echo "bench: installing piglit (apt-get)" >&2
	sudo_cmd=()
	if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
	"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends piglit >/dev/null
fi
if [ -n "${BENCH_KEEP:-}" ]; then
	rm -rf "$BENCH_KEEP"
	mkdir -p "$BENCH_KEEP"
	work=$(realpath "$BENCH_KEEP")
else
	work=$(mktemp -d)
fi

# The baseline's runs, then the build's: the same tests, 20 changes per machine.
# One run's folder at a time, in memory when /dev/shm is there (80 runs of
# 10k job folders on disk take over an hour to write here), packed into an
# archive as collect uploads it (ingest packs a folder, kept in a scratch
# data folder), its results.json written for piglit, then removed.
runs_dir=$work
if [ -n "${BENCH_RUNS:-}" ]; then
	runs_dir=$(realpath "$BENCH_RUNS")
	kept_base=("$runs_dir"/archive.base-*)
	kept_runs=("$runs_dir"/archive.new-*)
	kept_json=("$runs_dir"/json/*/results.json)
	if [ "$runs_dir" = "$work" ] || [ ! -e "${kept_runs[0]}" ] || [ ! -e "${kept_base[0]}" ] ||
	   [ "${#kept_base[@]}" != "$runs" ] || [ "${#kept_runs[@]}" != "$runs" ] ||
	   [ "${#kept_json[@]}" != "$runs" ]; then
		echo "bench: BENCH_RUNS=$BENCH_RUNS does not hold $runs runs of a BENCH_KEEP folder" \
			"(archive.base-*, archive.new-* and json/*/results.json), or is BENCH_KEEP itself" >&2
		exit 1
	fi
	echo "bench: the runs kept in $runs_dir" >&2
fi
scratch_parent=${BENCH_SCRATCH:-/dev/shm}
[ -d "$scratch_parent" ] && [ -w "$scratch_parent" ] || scratch_parent=$work
scratch=$(mktemp -d "$scratch_parent/bench-runs.XXXXXX")
trap 'rm -rf "$scratch"; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"' EXIT
[ "$runs_dir" = "$work" ] && echo "bench: generating and packing 2 x $runs runs of $results results" >&2
mkdir -p "$work/json"
for prefix in base new; do
	[ "$runs_dir" = "$work" ] || break
	changed=0
	[ "$prefix" = new ] && changed=20
	for ((i = 0; i < runs; i++)); do
		"$src/tests/bench/bench-runs.py" "$scratch" "$runs" "$results" --prefix "$prefix" \
			--changed "$changed" --only "$i"
		run=$(printf '%s-%03d' "$prefix" "$i")
		dir=$scratch/$run
		machine=lab-${run##*-}
		master ingest --data "$work/pack" --machine "$machine" --run-id "$run" "$dir" \
			>"$work/pack.$run.txt"
		sed -n 's/.*(archive \(.*\))$/\1/p' "$work/pack.$run.txt" >"$work/archive.$run"
		if [ "$prefix" = new ]; then
			mkdir "$work/json/$run"
			master results "$dir" -o "$work/json/$run/results.json"
		fi
		rm -rf "$dir"
	done
done

data=$work/data
store=(--data "$data")
master build add base --tree bench --commit 0000000 --tier full "${store[@]}" \
	--registered 1700000000 >/dev/null
master build add new --tree bench-series --commit 1111111 --tier full --base base \
	--series-title "bench: the build under test" "${store[@]}" --registered 1700100000 >/dev/null
for f in "$runs_dir"/archive.base-*; do
	master ingest "${store[@]}" --build base "$(cat "$f")" >/dev/null
done
new_archives=()
for f in "$runs_dir"/archive.new-*; do new_archives+=("$(cat "$f")"); done

BENCH_MASTER_TUNABLES=$master_tunables python3 - "$aggregator" "$work" "${#new_archives[@]}" "$results" "$ingest_jobs" \
	"$runs_dir" "${new_archives[@]}" <<'PY'
import collections, glob, json, os, shutil, sqlite3, subprocess, sys, time
aggregator, work, runs, results = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
jobs = sys.argv[5]  # a number, or auto (serve's workers)
runs_dir = sys.argv[6]
archives = sys.argv[7:]
data = os.path.join(work, "data")
# The master's processes get the unit's GLIBC_TUNABLES (the shell read it from the unit);
# the peers run with the environment as it is.
master_env = dict(os.environ, GLIBC_TUNABLES=os.environ["BENCH_MASTER_TUNABLES"])


def env_of(command):
    return master_env if command[0] == aggregator else None


def timed(commands):
    """Wall time of the commands one after the other, and the largest peak RSS (MiB) among them."""
    peak = 0
    start = time.monotonic()
    for c in commands:
        proc = subprocess.Popen(c, stdout=subprocess.DEVNULL, env=env_of(c))
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            sys.exit(f"bench: {' '.join(c)} failed ({status})")
        peak = max(peak, usage.ru_maxrss / 1024)
    return time.monotonic() - start, peak


def timed_at_once(commands, n):
    """Wall time of the commands run n at a time (a new one as soon as one ends), and the
    largest peak RSS (MiB) among them."""
    peak = 0
    running = {}
    start = time.monotonic()
    pending = list(commands)
    while pending or running:
        while pending and len(running) < n:
            c = pending.pop(0)
            running[subprocess.Popen(c, stdout=subprocess.DEVNULL, env=env_of(c)).pid] = c
        pid, status, usage = os.wait4(-1, 0)
        c = running.pop(pid, None)
        if c is None:
            continue
        if status != 0:
            sys.exit(f"bench: {' '.join(c)} failed ({status})")
        peak = max(peak, usage.ru_maxrss / 1024)
    return time.monotonic() - start, peak


jsons = sorted(glob.glob(os.path.join(runs_dir, "json", "*", "results.json")))
report = [aggregator, "report", "--data", data, "--build", "new", "--date", "1700200000",
          "--mbox", os.path.join(work, "reply.mbox")]
# An aggregator from before --results-url (AGGREGATOR=, a before/after) has only the pages.
usage = subprocess.run([aggregator, "report", "--help"], capture_output=True, text=True, env=master_env).stdout
served = "--results-url" in usage
# One after the other, into a copy of the store as it is before the build's runs.
data_one = os.path.join(work, "data-one-at-a-time")
shutil.rmtree(data_one, ignore_errors=True)
shutil.copytree(data, data_one)
# An aggregator from before `ingest --jobs` (a before/after): a process per archive.
help_text = subprocess.run([aggregator, "--help"], capture_output=True, text=True, env=master_env).stdout
one_process = "--jobs" in help_text
if jobs == "auto" and "--jobs N|auto" not in help_text:
    sys.exit("bench: this aggregator has no `ingest --jobs auto` (an older build): set BENCH_INGEST_JOBS=N")
if one_process:
    ingest_one = timed([[aggregator, "ingest", "--data", data_one, "--build", "new"] + archives])
else:
    ingest_one = timed([[aggregator, "ingest", "--data", data_one, "--build", "new", a]
                        for a in archives])
shutil.rmtree(data_one)


def ingest_build():
    if one_process:
        return timed([[aggregator, "ingest", "--data", data, "--build", "new", "--jobs",
                       str(jobs)] + archives])
    return timed_at_once([[aggregator, "ingest", "--data", data, "--build", "new", a]
                          for a in archives], int(jobs))


def median(samples):
    """The sample of median wall time, with the largest peak RSS of them all."""
    by_wall = sorted(samples)
    return by_wall[len(by_wall) // 2][0], max(m[1] for m in samples)


# The ratio's parts (our ingest 2 at a time and report with the matrix, piglit's html) are
# timed BENCH_REPEAT times in turn, each repeat into folders of its own (a copy of the store
# as it was before the build's runs; piglit's pages in a new folder), and their medians
# compared: a single run of each moved by a quarter with the host. Nothing is removed between
# them: on this disk (mounted with discard) the removal of piglit's 400k pages slowed the next
# run of anything. Every timed step starts with the page cache written back (sync), so that
# no step pays for the one before.
repeat = int(os.environ.get("BENCH_REPEAT") or "3")  # checked at the start, as "${BENCH_REPEAT:-3}"
data_before = os.path.join(work, "data-before")
shutil.rmtree(data_before, ignore_errors=True)
shutil.copytree(data, data_before)
samples = collections.defaultdict(list)
for r in range(repeat):
    if r:
        data = os.path.join(work, f"data-{r + 1}")
        shutil.rmtree(data, ignore_errors=True)
        shutil.copytree(data_before, data)
        report[report.index("--data") + 1] = data
    os.sync()
    samples["ingest"].append(ingest_build())
    if served:
        os.sync()
        samples["matrix"].append(timed([report + [
            "--html", os.path.join(work, f"html-served-{r + 1}"),
            "--results-url", "http://127.0.0.1:8080"]]))
    os.sync()
    samples["html"].append(timed([["piglit", "summary", "html", "--overwrite",
                                   os.path.join(work, f"piglit-html-{r + 1}")] + jsons]))
ingest = median(samples["ingest"])
matrix = median(samples["matrix"]) if served else None
html = median(samples["html"])
os.sync()
reply = timed([report])
os.sync()
pages = timed([report + ["--html", os.path.join(work, "html")]])
os.sync()
console = timed([["piglit", "summary", "console"] + jsons])
# The floor of any writer of a page per result on this file system: that many 2 KiB files.
floor_dir = os.path.join(work, "floor")
os.mkdir(floor_dir)
start = time.monotonic()
for i in range(runs * results):
    with open(os.path.join(floor_dir, f"{i}.html"), "w") as f:
        f.write("x" * 2048)
floor = time.monotonic() - start

# Fairness: the results piglit read are the results we stored and reported, status by status.
theirs = collections.Counter()
for path in jsons:
    with open(path, encoding="utf-8") as f:
        theirs.update(t["result"] for t in json.load(f)["tests"].values())
db = sqlite3.connect(os.path.join(data, "bootci.sqlite"))
ours_counts = collections.Counter(dict(db.execute(
    "SELECT res.result, count(*) FROM results res JOIN runs r ON r.id = res.run"
    " JOIN builds b ON b.id = r.build WHERE b.name = 'new' GROUP BY res.result")))
db.close()
if theirs != ours_counts or sum(theirs.values()) != runs * results:
    sys.exit(f"bench: not the same results: piglit reads {dict(theirs)}, the store holds "
             f"{dict(ours_counts)} (expected {runs * results})")

ours = matrix or pages
total = (ingest[0] + ours[0], max(ingest[1], ours[1]))
total_one = (ingest_one[0] + ours[0], max(ingest_one[1], ours[1]))
total_pages = (ingest[0] + pages[0], max(ingest[1], pages[1]))
print(f"report bench: {runs} runs x {results} results ({runs * results} results), the same on"
      f" both sides: " + ", ".join(f"{k} {v}" for k, v in sorted(theirs.items())))
print(f"  {'':50} {'wall':>9}   {'peak RSS':>11}")


def spread(what):
    walls = sorted(m[0] for m in samples[what])
    return f"median of {len(walls)}: {walls[0]:.2f} to {walls[-1]:.2f} s" if len(walls) > 1 else ""


def line(what, m, note=""):
    print(f"  {what:50} {m[0]:7.2f} s   {m[1]:7.1f} MiB   {note}".rstrip())


at_a_time = "serve's workers" if jobs == "auto" else jobs
line(f"bootci ingest ({runs} archives, {at_a_time} at a time)", ingest, spread("ingest"))
line(f"bootci ingest ({runs} archives, one at a time)", ingest_one)
line("bootci report: regressions + reply", reply)
if matrix:
    line("bootci report: + matrix html (results served)", matrix, spread("matrix"))
line("bootci report: + matrix html + a page per result", pages)
line("piglit summary html", html, spread("html"))
line("piglit summary console", console)
print(f"  {'one 2 KiB file per result, alone':50} {floor:7.2f} s   (floor of any page-per-result writer)")
print()
what = f"ingest, {at_a_time} at a time, + report with the matrix" + (" (results served)" if matrix else " and pages")
print(f"  issue 12 ({what}):")
print(f"    bootci {total[0]:7.2f} s {total[1]:7.1f} MiB   piglit summary html {html[0]:7.2f} s"
      f" {html[1]:7.1f} MiB")
print(f"    piglit html / bootci: {html[0] / total[0]:5.1f} x faster, {html[1] / total[1]:5.1f} x"
      f" less memory   (target 25 x and 5 x)")
print(f"  ingesting one archive at a time: {html[0] / total_one[0]:5.1f} x faster,"
      f" {html[1] / total_one[1]:5.1f} x less memory")
print(f"  with a static page per result too: {html[0] / total_pages[0]:5.1f} x faster,"
      f" {html[1] / total_pages[1]:5.1f} x less memory")
print(f"  piglit console / bootci: {console[0] / total[0]:5.1f} x faster,"
      f" {console[1] / total[1]:5.1f} x less memory")
PY

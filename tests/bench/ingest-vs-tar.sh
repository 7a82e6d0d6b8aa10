#!/usr/bin/env bash
# Bench: `bootci-aggregator ingest` against merely reading the same run
# archives (tar to /dev/null) and against unpacking them (tar -x into a
# folder, which ingest no longer does: it streams each archive twice, see
# aggregator/master/ingest/stream.c, so tar to /dev/null is its floor), side by side on the
# same machine, as ratios; with the ingest's peak memory. Issue 11's load: RUNS runs of RESULTS
# results each (Intel's 400k results a day: 40 x 10k), synthetic igt_runner
# folders (tests/bench/bench-runs.py: 100 binaries, each job one subtest, mostly passes), packed as collect
# uploads them; then each archive ingested into a fresh SQLite store, or
# into the PostgreSQL database BENCH_STORE_URL names when STORE=postgres.
#
# usage: tests/bench/ingest-vs-tar.sh [BUILD_DIR] [RUNS] [RESULTS]   (make bench runs it)
#        BENCH_MASTER_TUNABLES=VALUE: the aggregator's GLIBC_TUNABLES (default: the service unit's)
set -euo pipefail
build=$(realpath "${1:-build}")
runs=${2:-40}
results=${3:-10000}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=$build/host/bin/bootci-aggregator
# The master runs as its service unit runs it (aggregator/master/bootci-serve.service): with
# the unit's GLIBC_TUNABLES (malloc in transparent huge pages), read from the unit.
# BENCH_MASTER_TUNABLES=VALUE runs it with another value (empty: glibc's defaults), for a
# before/after. The peers (piglit, tar, curl) run with the environment as it is.
unit_tunables=$(sed -n 's/^Environment=GLIBC_TUNABLES=//p' "$src/aggregator/master/bootci-serve.service")
[ -n "$unit_tunables" ] || { echo "bench: no Environment=GLIBC_TUNABLES= in bootci-serve.service" >&2; exit 1; }
master_tunables=${BENCH_MASTER_TUNABLES-$unit_tunables}
# master ARGS...: the aggregator as the unit runs it
master() { GLIBC_TUNABLES=$master_tunables "$aggregator" "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$(dirname "$0")/bench-runs.py" "$work/runs" "$runs" "$results"

# Pack every run as collect would (ingest packs a folder first), into a scratch store.
for dir in "$work"/runs/*/; do
	master ingest --data "$work/pack" --machine bench "$dir" >/dev/null
done
archives=("$work"/pack/archives/*.tar.zst)

BENCH_MASTER_TUNABLES=$master_tunables python3 - "$aggregator" "$work" "${STORE:-sqlite}" "${archives[@]}" <<'PY'
import os, resource, subprocess, sys, time
aggregator, work, store = sys.argv[1], sys.argv[2], sys.argv[3]
archives = sys.argv[4:]
# The master's processes get the unit's GLIBC_TUNABLES (the shell read it from the unit);
# the peers run with the environment as it is.
master_env = dict(os.environ, GLIBC_TUNABLES=os.environ["BENCH_MASTER_TUNABLES"])


def env_of(command):
    return master_env if command[0] == aggregator else None


def timed(commands):
    start = time.monotonic()
    for c in commands:
        subprocess.run(c, check=True, stdout=subprocess.DEVNULL, env=env_of(c))
    return time.monotonic() - start

read = timed([["tar", "--zstd", "-xOf", a] for a in archives])
unpack_dir = os.path.join(work, "unpack")
os.mkdir(unpack_dir)
unpack = timed([["tar", "--zstd", "-xf", a, "-C", unpack_dir] for a in archives])
subprocess.run(["rm", "-rf", unpack_dir], check=True)
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
args = ["--data", os.path.join(work, "data")]
if store == "postgres":
    args += ["--store", os.environ["BENCH_STORE_URL"]]
ingest = timed([[aggregator, "ingest"] + args + [a] for a in archives])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
total = sum(os.path.getsize(a) for a in archives)
print(f"ingest bench: {len(archives)} archives, {total / 1e6:.1f} MB compressed")
print(f"  tar to /dev/null       {read:8.2f} s")
print(f"  tar -x into a folder   {unpack:8.2f} s")
print(f"  ingest ({store:8s})     {ingest:8.2f} s   peak memory {max(peak, before) / 1024:.1f} MiB")
print(f"  ingest / tar           {ingest / read:8.1f} x")
print(f"  ingest / tar -x        {ingest / unpack:8.1f} x")
PY

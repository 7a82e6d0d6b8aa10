#!/usr/bin/env bash
# Bench: `bootci-aggregator ingest` against merely reading the same run
# archives (tar to /dev/null) and against unpacking them (tar -x into a
# folder: ingest unpacks each run once into its cache), side by side on the
# same machine, as ratios; with the ingest's peak memory. Issue 11's load: RUNS runs of RESULTS
# results each (Intel's 400k results a day: 40 x 10k), synthetic igt_runner
# folders (100 binaries, each job one subtest that passes), packed as collect
# uploads them; then each archive ingested into a fresh SQLite store, or
# into the PostgreSQL database BENCH_STORE_URL names when STORE=postgres.
#
# usage: tests/bench/ingest-vs-tar.sh [BUILD_DIR] [RUNS] [RESULTS]   (make bench runs it)
set -euo pipefail
build=$(realpath "${1:-build}")
runs=${2:-40}
results=${3:-10000}
aggregator=$build/host/bin/bootci-aggregator
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work/runs" "$runs" "$results" <<'PY'
import os, sys
top, runs, results = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for r in range(runs):
    d = os.path.join(top, f"bench-{r:03d}")
    os.makedirs(d)
    def w(name, text):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    w("metadata.txt", "abort_mask : 0\ndmesg_warn_level : 4\n")
    w("joblist.txt", "".join(f"bench_{j % 100:02d} subtest-{j}\n" for j in range(results)))
    w("uname.txt", "Linux bench 6.1.0 #1 SMP x86_64 GNU/Linux\n")
    w("starttime.txt", "1700000000.000000\n")
    w("endtime.txt", "1700003600.000000\n")
    for j in range(results):
        job = os.path.join(d, str(j))
        os.mkdir(job)
        s = f"subtest-{j}"
        with open(os.path.join(job, "journal.txt"), "w") as f:
            f.write(f"{s}\nexit:0 (0.010s)\n")
        with open(os.path.join(job, "out.txt"), "w") as f:
            f.write(f"IGT-Version: 1.28-bench\nStarting subtest: {s}\nSubtest {s}: SUCCESS (0.010s)\n")
        open(os.path.join(job, "err.txt"), "w").close()
        open(os.path.join(job, "dmesg.txt"), "w").close()
PY

# Pack every run as collect would (ingest packs a folder first), into a scratch store.
for dir in "$work"/runs/*/; do
	"$aggregator" ingest --data "$work/pack" --machine bench "$dir" >/dev/null
done
archives=("$work"/pack/archives/*.tar.zst)

python3 - "$aggregator" "$work" "${STORE:-sqlite}" "${archives[@]}" <<'PY'
import os, resource, subprocess, sys, time
aggregator, work, store = sys.argv[1], sys.argv[2], sys.argv[3]
archives = sys.argv[4:]

def timed(commands):
    start = time.monotonic()
    for c in commands:
        subprocess.run(c, check=True, stdout=subprocess.DEVNULL)
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

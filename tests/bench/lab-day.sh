#!/usr/bin/env bash
# A lab ten times the seed's (issue 33 point 10): MACHINES machines play a day against serve on
# PostgreSQL, compressed into minutes. The seed's lab ran 400,000 results a day on 40 machines;
# here each of MACHINES (default 400) netboots for its next job (GET /api/v1/boot/MAC), fetches
# the job's initrd, runs, and uploads its run as collect does (hello, the question, the PUT),
# RUNS runs each (default 1: 400 x 10,000 = the day's 4 million results). The archives are
# collect's own (lib/run_archive.h's writer) of a synthetic 10,000-job igt_runner folder
# (bench-runs.py). One upload in 10 is cut at a random byte and resumed from what serve says
# it holds; one run in 8 has a boot crash in the middle (the same job netbooted again). The
# load is one C process on libcurl's multi interface (tests/bench/lab-day.c).
#
# Prints: nothing lost or doubled (every run asked for through the API, and counted in the
# store: one run per job, RESULTS results each, every job done, nothing left in incoming/);
# the p50 and p99 of the boot answer (and of the same answer from the idle serve, the peer)
# and of the upload's acknowledgement (201: kept and ingested); serve's CPU and memory per
# 100k results, PostgreSQL's CPU, the load generator's own.
#
# usage: tests/bench/lab-day.sh [BUILD] [MACHINES] [RUNS]
#        BENCH_DAY=SECONDS     the day compressed to this (default 240)
#        BENCH_RESULTS=N       results per run (default 10000, the seed lab's run)
#        BENCH_STORE=sqlite    the same day against serve on SQLite (default postgres)
#        BENCH_CUT_EVERY=N, BENCH_CRASH_EVERY=N (default 10, 8; 0: none)
#        BENCH_POLL=SECONDS    an idle machine netboots again after this (default 5)
#        BENCH_PG_OPTIONS=...  more postgres options (-c synchronous_commit=off), for a before/after
#        BENCH_KEEP=DIR        keep the data folder, logs and archives there
#        BENCH_MASTER_TUNABLES=VALUE: serve's GLIBC_TUNABLES (default: the service unit's)
#        AGGREGATOR=PATH       another bootci-aggregator (a before/after)
# The default is the whole day (400 x 10,000); `make bench` runs it. A quick look:
# tests/bench/lab-day.sh build 40 1.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
machines=${2:-400}
runs=${3:-1}
day=${BENCH_DAY:-240}
results=${BENCH_RESULTS:-10000}
store_kind=${BENCH_STORE:-postgres}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=${AGGREGATOR:-$build/host/bin/bootci-aggregator}
labday=$build/host/bin/bench/lab-day
pgbin=/usr/lib/postgresql/15/bin
for f in "$aggregator" "$labday"; do
	[ -x "$f" ] || { echo "lab-day: $f is not built (make all)" >&2; exit 1; }
done
unit_tunables=$(sed -n 's/^Environment=GLIBC_TUNABLES=//p' "$src/aggregator/master/bootci-serve.service")
[ -n "$unit_tunables" ] || { echo "bench: no Environment=GLIBC_TUNABLES= in bootci-serve.service" >&2; exit 1; }
master_tunables=${BENCH_MASTER_TUNABLES-$unit_tunables}

work=$(mktemp -d /tmp/bootci-labday.XXXXXX)
chmod 0755 "$work"
serve_pid=
# Servers run unprivileged: serve as nobody, PostgreSQL as postgres (it refuses root).
serve_as=() pg_as=()
if [ "$(id -u)" = 0 ]; then
	serve_as=(setpriv --reuid nobody --regid nogroup --clear-groups --)
	pg_as=(runuser -u postgres --)
fi
cleanup() {
	[ -z "$serve_pid" ] || kill -TERM "$serve_pid" 2>/dev/null
	[ -z "$serve_pid" ] || wait "$serve_pid" 2>/dev/null
	if [ -f "$work/db/postmaster.pid" ]; then
		"${pg_as[@]}" "$pgbin/pg_ctl" -D "$work/db" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			kill -KILL "$(head -n1 "$work/db/postmaster.pid")" 2>/dev/null
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then
		mkdir -p "$BENCH_KEEP" && cp -a "$work"/. "$BENCH_KEEP"/ 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

mkdir -p "$work/data" "$work/image" "$work/arch"

# The store.
pg_pid=0
if [ "$store_kind" = postgres ]; then
	[ -x "$pgbin/initdb" ] || { echo "lab-day: PostgreSQL 15 (Debian's postgresql-15) is not installed" >&2; exit 1; }
	mkdir "$work/db" "$work/sock"
	[ ${#pg_as[@]} = 0 ] || chown postgres: "$work/db" "$work/sock"
	"${pg_as[@]}" "$pgbin/initdb" -D "$work/db" -U postgres --auth=trust --encoding=UTF8 \
		--locale=C.UTF-8 >"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; exit 1; }
	# A Unix socket only; PostgreSQL's own defaults otherwise (fsync on: a master's store).
	"${pg_as[@]}" "$pgbin/pg_ctl" -D "$work/db" -l "$work/sock/server.log" -w -t 60 \
		-o "-k $work/sock -c listen_addresses= ${BENCH_PG_OPTIONS:-}" start >/dev/null || { cat "$work/sock/server.log" >&2; exit 1; }
	pg_pid=$(head -n1 "$work/db/postmaster.pid")
	store="postgresql:///postgres?host=$work/sock&user=postgres"
else
	store="sqlite:$work/data/bootci.sqlite"
fi

# The lab: machines, their tokens, and the list the load generator plays.
{
	printf '[tree bench]\nfull = never\n'
	for ((i = 0; i < machines; i++)); do
		printf '[machine m%03d]\nmac = 52:54:00:01:%02x:%02x\ntags = bench\n' "$i" $((i / 256)) $((i % 256))
	done
} >"$work/data/machines.conf"
: >"$work/tokens"
: >"$work/machines.list"
for ((i = 0; i < machines; i++)); do
	name=$(printf 'm%03d' "$i")
	printf '%s sha256:%s\n' "$name" "$(printf %s "token-of-$name" | sha256sum | cut -d' ' -f1)" >>"$work/tokens"
	printf '%s 52:54:00:01:%02x:%02x token-of-%s\n' "$name" $((i / 256)) $((i % 256)) "$name" >>"$work/machines.list"
done

# The run every machine uploads: a 10,000-job igt_runner folder, packed by collect's writer.
"$src/tests/bench/bench-runs.py" "$work/tpl" 1 "$results" --prefix run
sed 's/^\(bench_[0-9]*\) \(.*\)/igt@\1@\2/' "$work/tpl/run-000/joblist.txt" >"$work/image/fast.testlist"
cp "$work/image/fast.testlist" "$work/image/full.testlist"
head -c 4096 /dev/urandom >"$work/image/vmlinuz"
head -c 8192 /dev/urandom >"$work/image/initrd.img"
printf '#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0\ninitrd initrd.img\nboot\n' >"$work/image/boot.ipxe"
manifest_line() { printf '%s %s 100644 %s bootci-builder\n' "$(sha256sum <"$work/image/$1" | cut -d' ' -f1)" "$(stat -c %s "$work/image/$1")" "$1"; }
{
	echo "# bootci-builder manifest: SHA256 SIZE MODE PATH ORIGIN"
	manifest_line boot.ipxe
	manifest_line initrd.img
	manifest_line vmlinuz
} >"$work/image/manifest"

start=$(date +%s.%N)
# Two packers at once, each with half the machines.
for ((k = 1; k <= runs; k++)); do
	cut -d' ' -f1 "$work/machines.list" |
		xargs -n $(((machines + 1) / 2)) -P 2 "$labday" pack "$work/tpl/run-000" "$work/arch" "day$k-fast"
done
echo "lab-day: $((machines * runs)) archives of $results results packed in $(python3 -c "import sys,time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$start") s" \
	"($(du -sb "$work/arch" | cut -f1 | awk '{printf "%.0f", $1 / 1e6}') MB)"

# The builds, published before serve starts; a machine with no inventory entry at publish time
# has no job: ten of those netboot against the idle serve first (the peer).
[ ${#serve_as[@]} = 0 ] || chown -R nobody:nogroup "$work/data" "$work/image"
for ((k = 1; k <= runs; k++)); do
	GLIBC_TUNABLES=$master_tunables "${serve_as[@]}" "$aggregator" publish --data "$work/data" --store "$store" \
		--tree bench --commit "c$k" --tier fast --build "day$k" "$work/image" >>"$work/publish.log" 2>&1 ||
		{ cat "$work/publish.log" >&2; exit 1; }
done
: >"$work/idle.list"
for ((i = 0; i < 10; i++)); do
	printf '[machine idle%02d]\nmac = 52:54:00:02:00:%02x\n' "$i" "$i" >>"$work/data/machines.conf"
	printf 'idle%02d 52:54:00:02:00:%02x -\n' "$i" "$i" >>"$work/idle.list"
done

GLIBC_TUNABLES=$master_tunables "${serve_as[@]}" "$aggregator" serve --data "$work/data" --store "$store" \
	--listen 127.0.0.1:0 --tokens "$work/tokens" --port-file "$work/data/port" 2>"$work/server.log" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$work/data/port" ] && break; sleep 0.1; done
[ -s "$work/data/port" ] || { cat "$work/server.log" >&2; exit 1; }
base=http://127.0.0.1:$(cat "$work/data/port")

echo "lab-day: $machines machines, $runs run(s) each of $results results, a day in $day s, serve on $store_kind"
status=0
"$labday" load "$base" "$work/machines.list" "$work/arch" --runs "$runs" --day "$day" \
	--poll "${BENCH_POLL:-5}" --cut-every "${BENCH_CUT_EVERY:-10}" --crash-every "${BENCH_CRASH_EVERY:-8}" \
	--baseline 200 --idle-machines "$work/idle.list" --serve-pid "$serve_pid" --pg-pid "$pg_pid" \
	--results-per-run "$results" || status=1

# Nothing lost or doubled, from the store itself and the data folder.
if [ "$store_kind" = postgres ]; then
	query() { psql -X -q -A -t -F ' ' -h "$work/sock" -U postgres postgres -c "$1"; }
else
	query() { sqlite3 -separator ' ' "$work/data/bootci.sqlite" "$1"; }
fi
stored=$(query "SELECT count(*) FROM runs")
results_stored=$(query "SELECT count(*) FROM results")
doubled=$(query "SELECT count(*) FROM (SELECT r.run, r.name FROM results r GROUP BY r.run, r.name HAVING count(*) > 1) d")
short=$(query "SELECT count(*) FROM runs WHERE (SELECT count(*) FROM results WHERE results.run = runs.id) <> $results")
jobs=$(query "SELECT state || ':' || count(*) FROM schedule_jobs GROUP BY state ORDER BY state" | tr '\n' ' ')
orphans=$(query "SELECT count(*) FROM schedule_jobs j WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.machine = j.machine AND r.run_id = j.run_id)")
archives=$(find "$work/data/archives" -name '*.tar.zst' | wc -l)
left=$(find "$work/data/incoming" -type f 2>/dev/null | wc -l)
expected=$((machines * runs))
echo "the store: $stored runs of $expected, $results_stored results of $((expected * results))," \
	"$doubled results doubled, $short runs without exactly $results results; jobs $jobs;" \
	"$orphans jobs without their run; $archives archives kept; $left files left in incoming/"
if [ "$stored" = "$expected" ] && [ "$results_stored" = $((expected * results)) ] && [ "$doubled" = 0 ] &&
	[ "$short" = 0 ] && [ "$jobs" = "done:$expected " ] && [ "$orphans" = 0 ] && [ "$archives" = "$expected" ] &&
	[ "$left" = 0 ]; then
	echo "nothing lost, nothing doubled"
else
	echo "LOST OR DOUBLED: see above"
	status=1
fi
refused=$(grep -c ' 4[0-9][0-9] \| 5[0-9][0-9] ' "$work/server.log" || true)
echo "serve's log: $refused answers 4xx/5xx (the cut uploads' ends and retries among them)"
exit "$status"

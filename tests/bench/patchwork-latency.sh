#!/usr/bin/env bash
# From the mail to pending (issue 35 point 6): the real Patchwork 3.1.3 (../shared/patchwork/,
# started as tests/aggregator/patchwork.t starts it, on 127.0.0.1, as `nobody` when root) and
# serve following its project with a poll every POLL seconds and a build command that takes
# BUILD seconds (`git am` of the series in a fresh clone, a sleep, a prebuilt image copied).
# Each round mails a series of PATCHES patches and a cover letter in, as a list would
# (parse_mail, one process for the whole series), at a random phase of the poll, then prints:
#   noticed   from the series complete on Patchwork (parse_mail's return for its last
#             message) to the master picking it up (the store's pick-up time), against the
#             poll interval (the anchor: "within one poll interval");
#   pending   from the pick-up to `pending` on every patch, as Patchwork dates the last of the
#             checks, and as an API reader (the tests' helper) first saw them all, against a
#             minute (the anchor: "within a minute of it");
# and the build's stages as `bootci-aggregator metrics` gives them.
#
# usage: tests/bench/patchwork-latency.sh [BUILD] [POLL-SECONDS] [PATCHES] [ROUNDS] [BUILD-SECONDS]
# Skipped (exit 0, said) without the Patchwork tarball or Debian's Django packages.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
poll=${2:-20}
patches=${3:-30}
rounds=${4:-2}
build_seconds=${5:-20}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=$build/host/bin/bootci-aggregator
work=$(mktemp -d /tmp/bootci-pw-bench.XXXXXX)
chmod 0755 "$work"
SRC=$src
# shellcheck source=tests/aggregator/patchwork-lib.sh
. "$src/tests/aggregator/patchwork-lib.sh"
missing=$(pw_missing)
if [ -n "$missing" ]; then
	echo "patchwork-latency: skipped: $missing"
	rm -rf "$work"
	exit 0
fi
data=$work/data
mkdir -p "$data"
serve_pid=
pw_pid=
cleanup() {
	[ -z "$serve_pid" ] || { kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; }
	[ -z "$pw_pid" ] || { kill -TERM "$pw_pid" 2>/dev/null; wait "$pw_pid" 2>/dev/null || true; }
	rm -rf "$work"
}
trap cleanup EXIT
pw_unpack
admin settings
read -r ci_token _ < <(admin setup bootci-bench bootci-bench.lists.bootci.test)
printf '%s\n' "$ci_token" >"$work/ci.token"
pw_run || { echo "patchwork-latency: Patchwork did not start" >&2; cat "$work/patchwork.log" >&2; exit 1; }

# The "kernel tree" and the build command: a fresh clone, git am, BUILD seconds, an image.
repo=$work/repo
pw_repo "$repo"
git -C "$repo" branch -f ci-base
image=$work/image
pw_image "$image"
pw_build_command "$work/build-cmd" "$image" "$build_seconds"
cat >"$data/patchwork.conf" <<CONF
[project bench]
url = $pw_url
project = bootci-bench
token-file = $work/ci.token
poll = ${poll}s
serve-url = http://localhost:8080
build-command = $work/build-cmd
base = $repo
branch = ci-base
tree = t
build-timeout = 10m
CONF
: >"$work/tokens"
"$aggregator" serve --data "$data" --listen 127.0.0.1:0 --tokens "$work/tokens" \
	--port-file "$work/port" >>"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
	[ -s "$work/port" ] && break
	sleep 0.1
done

echo "patchwork-latency: a poll every $poll s, series of $patches patches, a build of $build_seconds s, $rounds round(s)"
printf '%-6s %8s %14s %10s %14s %14s %10s\n' round series "noticed (s)" "/ poll" "pending (s)" "seen (s)" "/ 60 s"
for round in $(seq "$rounds"); do
	# Each round at another phase of the poll.
	sleep "$("$python" -c "import random; print(round(random.uniform(0, $poll), 1))")"
	git -C "$repo" checkout -q -B "round-$round" "$base_commit"
	for i in $(seq "$patches"); do
		echo "round $round change $i" >"$repo/f$i"
		git -C "$repo" add "f$i"
		git -C "$repo" commit -qm "igt: round $round: change $i"
	done
	rm -rf "$work/mails"
	git -C "$repo" format-patch -q --cover-letter --thread=shallow -n -v 1 \
		--add-header='List-Id: <bootci-bench.lists.bootci.test>' -o "$work/mails" "$base_commit"
	sed -i "s/\*\*\* SUBJECT HERE \*\*\*/round $round/" "$work"/mails/*cover-letter.patch
	for f in "$work"/mails/*.patch; do cat "$f"; echo; done >"$work/round.mbox"
	chmod 0644 "$work/round.mbox"
	admin parse "$work/round.mbox"
	complete=$(date +%s.%N)
	series=$(curl -s "$pw_url/api/1.2/series/?order=-id&per_page=1" | "$python" -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
	read -r seen_all pw_dated < <("$python" "$admin" wait-pending "$pw_url" "$series" $((poll + 120)))
	noticed=$(sqlite3 "$data/bootci.sqlite" "SELECT printf('%.6f', seen) FROM patchwork_series WHERE series = $series")
	"$python" -c 'import sys
r, s, c, n, d, v, p = sys.argv[1:]
c, n, d, v, p = map(float, (c, n, d, v, p))
print(f"{r:<6} {s:>8} {n - c:14.2f} {(n - c) / p:10.2f} {d - n:14.2f} {v - n:14.2f} {(d - n) / 60:10.3f}")' \
		"$round" "$series" "$complete" "$noticed" "$pw_dated" "$seen_all" "$poll"
done
echo "noticed: the series complete (parse_mail returned) to its pick-up; pending: the pick-up to Patchwork's"
echo "date of the last patch's pending check; seen: to an API reader seeing every patch's"
# The last round's build, once built: its stages as the metrics give them.
wait_built() { sqlite3 "$data/bootci.sqlite" "SELECT 1 FROM builds WHERE name = 'pw-bench-$series'" | grep -q 1; }
for _ in $(seq $(((build_seconds + 60) * 10))); do
	wait_built && break
	sleep 0.1
done
"$aggregator" metrics --data "$data" --from 0 --to $(($(date +%s) + 60)) | "$python" -c '
import json, sys
m = json.load(sys.stdin)
b = next((b for b in m["builds"] if b["name"] == sys.argv[1]), None)
if not b:
    sys.exit("patchwork-latency: the last series was not built")
print("stages of %s (its clock from the %s):" % (b["name"], b["clock_start"]))
start = b["start"]
for key, at in b["stages"].items():
    if at is not None:
        print("  %-14s +%8.2f s" % (key, at - start))
' "pw-bench-$series"

#!/usr/bin/env bash
# The master bisects a tree's build by hand (issue 37, `bisect start BUILD` for trees), without
# QEMU: serve with machines.conf's [tree t] naming the tree's git clone and a build command that
# checks a commit out and copies a prebuilt image with the tree's testlists (bootci-builder is
# not run, to keep it fast), two machines of one shard group whose runs are ingested by hand as
# their uploads would be:
#   - the tree's build base-1 passes; t-2, five commits later, fails igt@core@bad on both
#     machines: the fourth commit since base-1 added it to fast.testlist, the second does not
#     build (a file BROKEN, gone in the third), the others are harmless;
#   - `bisect start t-2` is refused while its fast tier runs, and for a tree without a repo;
#   - started once the reruns (reruns = 1) confirmed it: the range is the 5 commits since base-1
#     (t-2 has no base: the newest earlier build of its tree whose commit is an ancestor);
#   - serve's tree bisector: commit 2's candidate does not build (skipped, git bisect skip),
#     commit 3's does not list the test (good, no boot), commit 4's runs it alone on a machine
#     and fails: commit 4 is named with its hash and subject, in serve's log, `bisect show`, the
#     page /bisects/t-2 and a mail queued in the outbox naming the commit's author;
#   - a suspend latency regression (the tree "lat": lat-2's S3 cycles on m1 resume ten times
#     slower than lat-1's) is bisected the same way: each step runs the candidate's S3 cycles
#     alone on m1 and holds their median against lat-1's slowest cycle; commit 2 of 3 is named.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"
# shellcheck source=tests/aggregator/patchwork-lib.sh
. "$SRC/tests/aggregator/patchwork-lib.sh"
python=/usr/bin/python3
data=$work/data
mkdir -p "$data"
: >"$work/tokens"

repo=$work/repo
git init -q -b master "$repo"
edit() { # edit FILE TEXT SUBJECT: TEXT appended to FILE, committed by Ann
	echo "$2" >>"$repo/$1"
	git -C "$repo" add "$1"
	git -C "$repo" -c user.name="Ann Developer" -c user.email=ann@bootci.test \
		commit -qm "$3"
}
edit fast.testlist "igt@core@a" "testlists: fast"
edit full.testlist "igt@t@1" "testlists: full"
good=$(git -C "$repo" rev-parse HEAD)
edit NOTES "one" "drm/x: NOTES: one"
edit BROKEN "this commit does not build" "drm/x: a commit that does not build"
git -C "$repo" rm -q BROKEN
git -C "$repo" -c user.name="Ann Developer" -c user.email=ann@bootci.test \
	commit -qm "drm/x: it builds again"
edit fast.testlist "igt@core@bad" "drm/x: fast.testlist: run igt@core@bad"
bad_commit=$(git -C "$repo" rev-parse HEAD)
edit NOTES "two" "drm/x: NOTES: two"
head=$(git -C "$repo" rev-parse HEAD)
range=$(git -C "$repo" rev-list --first-parent --reverse "$good..$head" | tr '\n' ' ')
diag <<<"range: $range"

# The tree "lat": its fast testlist holds 3 S3 cycles; three commits, the second slows resume.
lat=$work/lat
git init -q -b master "$lat"
printf 'igt@core@a\nbootci@suspend@mem@3\n' >"$lat/fast.testlist"
printf 'igt@t@1\n' >"$lat/full.testlist"
git -C "$lat" add fast.testlist full.testlist
git -C "$lat" -c user.name=Ann -c user.email=ann@bootci.test commit -qm "testlists"
lat_good=$(git -C "$lat" rev-parse HEAD)
for i in 1 2 3; do
	echo "$i" >>"$lat/NOTES"
	git -C "$lat" add NOTES
	git -C "$lat" -c user.name=Ann -c user.email=ann@bootci.test commit -qm "pm: change $i"
done
lat_slow=$(git -C "$lat" rev-parse HEAD~1)
lat_head=$(git -C "$lat" rev-parse HEAD)

image=$work/image
pw_image "$image"
pw_build_command "$work/build-cmd" "$image" 0 testlists
cat >"$data/machines.conf" <<CONF
[schedule]
reruns = 1
[machine m1]
mac = 52:54:00:00:00:01
shard-group = g
[machine m2]
mac = 52:54:00:00:00:02
shard-group = g
[tree t]
full = never
repo = $repo
build-command = $work/build-cmd
build-timeout = 60s
[tree lat]
full = never
repo = $lat
build-command = $work/build-cmd
[tree gone]
full = never
repo = $work/no-such-clone
build-command = $work/build-cmd
[tree bare]
full = never
CONF
cat >"$data/mail.conf" <<CONF
url = smtp://127.0.0.1:1/lab.example
from = bootci <ci@lab.example>
to = the list <list@lab.example>
CONF
export BOOTCI_SCHEDULE_TICK=1
start_server

# publish NAME COMMIT [TREE [REPO]]: REPO (the tree t's) at COMMIT built by the build command and
# published as build NAME of TREE (t)
publish() {
	local out=$work/out-$1
	mkdir -p "$out"
	: >"$work/empty.mbox"
	"$work/build-cmd" "$work/empty.mbox" "${4:-$repo}" "$2" "$out" >>"$work/setup.log" 2>&1 &&
		"$aggregator" publish --data "$data" --tree "${3:-t}" --commit "$2" --tier fast \
			--build "$1" "$out" >>"$work/setup.log" 2>&1
}
fast_queued() { [ "$(jobs_of "$1" | grep -c " fast 1/1 queued")" = 2 ]; }

check "the tree's build base-1 published at its first commits, its fast tier passed" eval '
	publish base-1 "$good" && wait_until fast_queued base-1 &&
	run_up m1 base-1-fast base-1 core@a=pass && run_up m2 base-1-fast base-1 core@a=pass'
check "t-2 published, five commits later" eval 'publish t-2 "$head" && wait_until fast_queued t-2'
"$aggregator" bisect start t-2 --data "$data" >"$work/out" 2>&1
status=$?
check "bisect start t-2 while its fast tier runs: refused (exit 1), saying so" eval '
	[ $status = 1 ] && grep -q "t-2: its fast tier (and its reruns) have not ended" "$work/out"'
for m in m1 m2; do
	run_up "$m" t-2-fast t-2 core@a=pass core@bad=fail
done
confirm_queued() { [ "$(jobs_of t-2 | grep -c " confirm 1/1 queued")" = 2 ]; }
check "its possible new issue is rerun once on each machine" wait_until confirm_queued
for m in m1 m2; do
	run_up "$m" t-2-confirm-1 t-2 core@bad=fail
done
publish bare-1 "$head" bare >/dev/null 2>&1
"$aggregator" bisect start bare-1 --data "$data" >"$work/out" 2>&1
status=$?
check "bisect start of a tree without repo and build-command: refused, naming machines.conf" eval '
	[ $status = 1 ] && grep -q "machines.conf has no \[tree bare\] with a repo and a build-command" "$work/out"'
publish gone-1 "$good" gone && publish gone-2 "$head" gone
for m in m1 m2; do
	run_up "$m" gone-1-fast gone-1 core@a=pass && run_up "$m" gone-2-fast gone-2 core@bad=fail
done
gone_refused() {
	"$aggregator" bisect start gone-2 --data "$data" >"$work/out" 2>&1 && return 2
	grep -q "no-such-clone: git merge-base --is-ancestor ${good:0:12} ${head:0:12}: " "$work/out" ||
		{ sleep 1; return 1; }
}
check "bisect start of a tree whose repo is not there: refused, naming it and git's words" \
	wait_until gone_refused
diag <"$work/out"
started_by_hand() {
	"$aggregator" bisect start t-2 --data "$data" >"$work/out" 2>&1 ||
		{ sleep 1; return 1; }
}
wait_until started_by_hand
check "bisect start t-2: 5 commits since base-1's, 1 test" \
	grep -qx "bisect t-2: started: 5 commits since $good (build base-1), 1 test(s)" "$work/out"
diag <"$work/out"
step1=$(log_line 60 "tree-bisect: bisect t-2: step 1: ")
check "step 1: commit 2's candidate does not build: skipped" eval '
	[[ "$step1" == *"step 1: commit 2 of 5 (t-2-c${range:41:12}): skipped: does not build (its build.log says why)" ]]'
bad_candidate=t-2-c${bad_commit:0:12}
step_queued() { [ "$(jobs_of "$bad_candidate" | grep -c " bisect 1/1 queued")" = 1 ]; }
check "step 3: commit 4's candidate gets one run of igt@core@bad alone" eval '
	wait_until step_queued &&
	[ "$(sqlite3 "$data/bootci.sqlite" "SELECT testlist FROM schedule_jobs WHERE run_id = '"'"'$bad_candidate-bisect-1'"'"'")" = "igt@core@bad" ]'
machine=$(jobs_of "$bad_candidate" | awk '/ bisect 1\/1 queued/ { print $1; exit }')
run_up "$machine" "$bad_candidate-bisect-1" "$bad_candidate" core@bad=fail
verdict=$(log_line 60 "tree-bisect: bisect t-2: (first bad commit|not reproduced|inconclusive)")
diag <<<"$verdict"
check "commit 4 of 5 named: its hash and subject" eval '
	[[ "$verdict" == *"bisect t-2: first bad commit 4 of 5: $bad_commit drm/x: fast.testlist: run igt@core@bad" ]]'
steps=$(grep -a -o -E "bisect t-2: step [0-9]+: commit [0-9]+ of 5 \([^)]*\): (good|bad|skipped|flaky)" \
	"$work/server.log" | sed -E 's/.*step ([0-9]+): commit ([0-9]+) .*: ([a-z]+)$/\1 \2 \3/')
diag <<<"$steps"
check "steps: commit 2 skipped, 3 good (no boot), 4 bad" test "$steps" = $'1 2 skipped\n2 3 good\n3 4 bad'
show=$("$aggregator" bisect show t-2 --data "$data" 2>&1)
diag <<<"$show"
check "bisect show: done, the tree's range, its steps" eval '
	[[ "$(head -n 1 <<<"$show")" == "bisect t-2: done: first bad commit 4 of 5: $bad_commit "* ]] &&
	grep -qx "tree t: 5 commits, ${range:0:12} to ${head:0:12}" <<<"$show" &&
	grep -qx "step 3: commit 4 of 5 ($bad_candidate): bad: igt@core@bad failed 1 of 1 run(s)" <<<"$show"'
page=$(curl -s "$base/bisects/t-2")
check "serve's page /bisects/t-2: the tree and commit 4" eval '
	grep -qF "first bad commit 4 of 5: $bad_commit" <<<"$page" && grep -qF "tree t, 5 commits" <<<"$page"'
mail=$(sqlite3 "$data/bootci.sqlite" "SELECT message FROM mail_outbox WHERE build = 't-2-bisect'")
diag <<<"$mail"
check "the mail to the list: the first bad commit, its author, each step" eval '
	[ "$("$python" -c "import email, email.policy, sys
print(email.message_from_string(sys.stdin.read(), policy=email.policy.default)[\"Subject\"])" <<<"$mail")" = "bootci bisect: first bad commit of t-2" ] &&
	grep -q "^commit $bad_commit" <<<"$mail" && grep -q "^Author: Ann Developer <ann@bootci.test>" <<<"$mail" &&
	grep -q "^  3. commit 4 of 5, ${bad_commit:0:12} ($bad_candidate): bad" <<<"$mail"'
check "a candidate is in no baseline: its tree is t-bisect" \
	test "$(sqlite3 "$data/bootci.sqlite" "SELECT tree FROM builds WHERE name = '$bad_candidate'")" = t-bisect

# ---- a suspend latency regression bisected (the tree "lat") ----
check "lat-1 (3 S3 cycles, resumes within 0.03 s) and lat-2 (0.5 s) published and run" eval '
	publish lat-1 "$lat_good" lat "$lat" && wait_until fast_queued lat-1 &&
	run_up m1 lat-1-fast lat-1 core@a=pass suspend=0.01,0.02,0.03 &&
	run_up m2 lat-1-fast lat-1 core@a=pass suspend=0.02,0.01,0.03 &&
	publish lat-2 "$lat_head" lat "$lat" && wait_until fast_queued lat-2 &&
	run_up m1 lat-2-fast lat-2 core@a=pass suspend=0.5,0.6,0.5 &&
	run_up m2 lat-2-fast lat-2 core@a=pass suspend=0.02,0.01,0.03'
started_lat() {
	"$aggregator" bisect start lat-2 --data "$data" >"$work/out" 2>&1 || { sleep 1; return 1; }
}
wait_until started_lat
diag <"$work/out"
check "bisect start lat-2: 3 commits, the suspend latency its one regression (m1's)" eval '
	grep -qx "bisect lat-2: started: 3 commits since $lat_good (build lat-1), 1 test(s)" "$work/out" &&
	"$aggregator" bisect show lat-2 --data "$data" | grep -qx "tests: suspend-latency" &&
	"$aggregator" bisect show lat-2 --data "$data" | grep -qx "machines: m1"'
lat_queued() { [ "$(jobs_of "$1" | grep -c " bisect 1/1 queued")" = 1 ]; }
c1=lat-2-c$(git -C "$lat" rev-parse HEAD~2 | cut -c1-12)
c2=lat-2-c${lat_slow:0:12}
check "step 1: commit 1's candidate runs its S3 cycles alone on m1" eval '
	wait_until lat_queued "$c1" &&
	[ "$(sqlite3 "$data/bootci.sqlite" "SELECT m.name || \" \" || j.testlist FROM schedule_jobs j JOIN machines m ON m.id = j.machine WHERE run_id = '"'"'$c1-bisect-1'"'"'")" = "m1 bootci@suspend@mem@3" ]'
run_up m1 "$c1-bisect-1" "$c1" suspend=0.02,0.03,0.01
check "commit 1 resumes as fast as the baseline: good; commit 2's runs next" eval '
	wait_until lat_queued "$c2"'
run_up m1 "$c2-bisect-1" "$c2" suspend=0.4,0.5,0.45
verdict=$(log_line 60 "tree-bisect: bisect lat-2: (first bad commit|not reproduced|inconclusive)")
diag <<<"$verdict"
check "commit 2 of 3 named for the suspend latency" eval '
	[[ "$verdict" == *"bisect lat-2: first bad commit 2 of 3: $lat_slow pm: change 2" ]] &&
	"$aggregator" bisect show lat-2 --data "$data" |
		grep -qx "step 2: commit 2 of 3 ($c2): bad: suspend latency beyond the baseline.s in 1 of 1 run(s)"'
stop_server
check "serve stops (exit 0)" test "$server_status" = 0

done_testing

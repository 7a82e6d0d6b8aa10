#!/usr/bin/env bash
# The master bisects a series on its own (issue 37), without QEMU: the real Patchwork 3.1.3 on
# 127.0.0.1 (as patchwork.t runs it), serve following it with a build command that applies the
# series to a small git tree and copies a prebuilt image with the tree's testlists (bootci-builder
# is not run, to keep the test fast), two machines of one shard group in machines.conf whose runs
# are ingested by hand as their uploads would be:
#   - a 4-patch series whose third adds igt@core@bad to the fast testlist, the others harmless;
#     the third's author and subject are not ASCII (git format-patch writes RFC 2047 words);
#     its fast tier fails igt@core@bad on both machines: the reruns of the possible new issue
#     (reruns = 2, a job each) are queued, fail too, and the gate decides;
#   - the branch then moves on to a commit that does not build: the candidates are built on the
#     commit it was at for the series' build (kept in DATA/series/lab/ID/base-commit);
#   - the bisection starts by itself: patch 2's candidate does not list the test (good, no job),
#     patch 3's gets 2 runs, one on each machine, of that test alone (kind bisect);
#   - serve is stopped and started again mid-step: the bisection goes on from the store;
#   - both runs fail: patch 3 of 4 is named, in 2 steps, in serve's log, `bisect show`, the page
#     /bisects/BUILD and a bootci-bisect fail check on patch 3 alone (Patchwork's REST API),
#     its subject decoded in each; the mail queued on the series' thread names its author
#     decoded too, in a UTF-8 text/plain body (no SMTP server answers: it stays in the outbox);
#   - `bisect start` of it again is refused.
# Skipped when the tarball or Debian's python3-django, python3-djangorestframework and
# python3-django-filters are absent.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

# shellcheck source=tests/aggregator/patchwork-lib.sh
. "$SRC/tests/aggregator/patchwork-lib.sh"
pw_test_begin
cleanup_patchwork() {
	[ -z "$pw_pid" ] || kill -TERM "$pw_pid" 2>/dev/null
	cleanup
}
trap cleanup_patchwork EXIT
pw_run || {
	echo "Bail out! Patchwork did not start:"
	diag <"$work/patchwork.log"
	exit 1
}

# The "kernel tree": its testlists; the series: 4 patches, the third adds igt@core@bad.
repo=$work/repo
pw_repo "$repo"
printf 'igt@core@a\n' >"$repo/fast.testlist"
printf 'igt@t@1\n' >"$repo/full.testlist"
git -C "$repo" add fast.testlist full.testlist
git -C "$repo" commit -qm "testlists"
git -C "$repo" branch -f ci-base HEAD
base_commit=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" checkout -q -B series "$base_commit"
edit() { # edit FILE TEXT SUBJECT: TEXT appended to FILE, committed
	echo "$2" >>"$repo/$1"
	git -C "$repo" add "$1"
	git -C "$repo" commit -qm "$3"
}
edit NOTES "one" "drm/x: NOTES: one"
edit NOTES "two" "drm/x: NOTES: two"
GIT_AUTHOR_NAME="René Düsseldorf" GIT_AUTHOR_EMAIL=rene@bootci.test \
	edit fast.testlist "igt@core@bad" "drm/x: fast.testlist: run igt@core@bad, prüfe <über> & mehr"
edit NOTES "three" "drm/x: NOTES: three"
git -C "$repo" format-patch -q --cover-letter --thread=shallow -n -v 1 \
	--add-header='List-Id: <bootci-test.lists.bootci.test>' -o "$work/s1" "$base_commit"
sed -i "s/\*\*\* SUBJECT HERE \*\*\*/four changes/" "$work"/s1/*cover-letter.patch
for f in "$work"/s1/*.patch; do
	cat "$f"
	echo
done >"$work/series.mbox"
chmod 0644 "$work/series.mbox"
admin parse "$work/series.mbox" || { echo "Bail out! Patchwork did not take the series"; exit 1; }
series=$(curl -s "$pw_url/api/1.2/series/?order=-id&per_page=1" | "$python" -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
build=pw-lab-$series
bad_subject="[PATCH v1 3/4] drm/x: fast.testlist: run igt@core@bad, prüfe <über> & mehr"

# The build command: the series applied to the tree, a prebuilt image, the tree's testlists.
image=$work/image
pw_image "$image"
pw_build_command "$work/build-cmd" "$image" 0 testlists
cat >"$data/patchwork.conf" <<CONF
[project lab]
url = $pw_url
project = bootci-test
token-file = $work/ci.token
serve-url = http://localhost:8080
first-series = $series
build-command = $work/build-cmd
base = $repo
branch = ci-base
tree = t
build-timeout = 60s
CONF
cat >"$data/machines.conf" <<CONF
[schedule]
reruns = 2
bisect-steps = 6
[machine m1]
mac = 52:54:00:00:00:01
shard-group = g
[machine m2]
mac = 52:54:00:00:00:02
shard-group = g
[tree t]
full = never
CONF
printf 'url = smtp://127.0.0.1:1/lab.example\nfrom = bootci <ci@lab.example>\nto = list <bootci-test@lists.bootci.test>\ninterval = 1s\n' \
	>"$data/mail.conf"
export BOOTCI_SCHEDULE_TICK=1 BOOTCI_PATCHWORK_POLL=1s
start_server


fast_queued() { [ "$(jobs_of "$build" | grep -c " fast 1/1 queued")" = 2 ]; }
check "the series is picked up, built and its fast tier queued on both machines" \
	wait_until fast_queued
check "the commit its branch was at is kept for its bisection (DATA/series/lab/ID/base-commit)" \
	test "$(cat "$data/series/lab/$series/base-commit" 2>&1)" = "$base_commit"
# The branch moves on meanwhile, to a tree that does not build: the candidates do not see it.
git -C "$repo" checkout -q ci-base
edit BROKEN "the branch moved on to a tree that does not build" "drm/x: break the build"
git -C "$repo" checkout -q series
for m in m1 m2; do
	run_up "$m" "$build-fast" "$build" core@a=pass core@bad=fail
done
confirm_queued() { [ "$(jobs_of "$build" | grep -c " confirm 1/1 queued")" = 4 ]; }
check "its possible new issue is rerun: 2 confirm jobs on each machine" wait_until confirm_queued
for m in m1 m2; do
	for k in 1 2; do
		run_up "$m" "$build-confirm-$k" "$build" core@bad=fail
	done
done
started=$(log_line 60 "bisect $build: started")
check "the reruns confirm it; the bisection starts by itself: 4 patches, igt@core@bad" \
	eval '[[ "$started" == *"bisect $build: started: 4 patches, 1 test(s): igt@core@bad"* ]]'
step1=$(log_line 60 "bisect $build: step 1: ")
check "step 1: patch 2's candidate does not list the test: good, no job" eval '
	[[ "$step1" == *"step 1: patch 2 of 4 ($build-k2): good: its testlists run none of the regressed tests (no boot)" ]] &&
	[ -z "$(jobs_of "$build-k2")" ]'
step2_queued() { [ "$(jobs_of "$build-k3" | grep -c " bisect 1/1 queued")" = 2 ]; }
wait_until step2_queued
testlists=$(sqlite3 "$data/bootci.sqlite" "SELECT DISTINCT testlist FROM schedule_jobs WHERE run_id LIKE '$build-k3-bisect-%'")
check "step 2: patch 3's candidate gets 2 runs of igt@core@bad alone, one on each machine" eval '
	jobs_of "$build-k3" | grep -q "^m1 .* $build-k3-bisect-1 " &&
	jobs_of "$build-k3" | grep -q "^m2 .* $build-k3-bisect-2 " && [ "$testlists" = "igt@core@bad" ]'
stop_server
show=$("$aggregator" bisect show "$build" --data "$data" 2>&1)
diag <<<"$show"
check "serve stopped mid-step: the store holds the bisection, its step 2 running" eval '
	[ "$(head -n 1 <<<"$show")" = "bisect $build: running" ] &&
	grep -qx "step 2: patch 3 of 4 ($build-k3): running" <<<"$show"'
start_server
for k in 1 2; do
	run_up "m$k" "$build-k3-bisect-$k" "$build-k3" core@bad=fail
done
verdict=$(log_line 60 "bisect $build: (first bad patch|not reproduced|inconclusive)")
check "started again, it goes on: patch 3 of 4 named, with its subject and Message-ID" eval '
	[[ "$verdict" == *"bisect $build: first bad patch 3 of 4: $bad_subject <"*">" ]]'
steps=$(grep -a -o -E "bisect $build: step [0-9]+: patch [0-9]+ of 4 \([^)]*\): (good|bad|skipped|flaky)" \
	"$work/server.log" | sed -E 's/.*step ([0-9]+): patch ([0-9]+) .*: ([a-z]+)$/\1 \2 \3/')
check "in 2 steps: patch 2 good, patch 3 bad" test "$steps" = $'1 2 good\n2 3 bad'
show=$("$aggregator" bisect show "$build" --data "$data" 2>&1)
check "bisect show: done, its answer, its steps" eval '
	[[ "$(head -n 1 <<<"$show")" == "bisect $build: done: first bad patch 3 of 4: $bad_subject <"* ]] &&
	grep -qx "step 2: patch 3 of 4 ($build-k3): bad: igt@core@bad failed 2 of 2 run(s)" <<<"$show"'
page=$(curl -s "$base/bisects/$build")
check "serve's page /bisects/$build names patch 3, its subject decoded and escaped" eval '
	grep -qF "first bad patch 3 of 4" <<<"$page" && grep -qF "$build-k3" <<<"$page" &&
	grep -qF "run igt@core@bad, prüfe &lt;über&gt; &amp; mehr" <<<"$page"'
mail_id=$("$aggregator" mail list --data "$data" 2>&1 | awk -F'\t' -v b="$build-bisect" '$6 == b {print $1}')
"$aggregator" mail show "$mail_id" --data "$data" 2>&1 | tr -d '\r' >"$work/bisect.eml"
check "its mail names the patch's subject and author decoded, in a UTF-8 8bit body" eval '
	grep -qxF "  Subject: $bad_subject" "$work/bisect.eml" &&
	grep -qxF "  Author: René Düsseldorf <rene@bootci.test>" "$work/bisect.eml" &&
	grep -qxF "Content-Type: text/plain; charset=utf-8" "$work/bisect.eml" &&
	grep -qxF "Content-Transfer-Encoding: 8bit" "$work/bisect.eml"' || diag <"$work/bisect.eml"
# on_patches: each patch's subject, then its bootci-bisect checks, from Patchwork's REST API
on_patches() {
	curl -s "$pw_url/api/1.2/series/$series/" | "$python" -c 'import json, sys, urllib.request
for p in sorted(json.load(sys.stdin)["patches"], key=lambda p: p["id"]):
    for c in json.load(urllib.request.urlopen(p["url"] + "checks/")):
        if c["context"] == "bootci-bisect":
            print(p["name"], "|", c["state"], c["description"], c["target_url"])'
}
one_check() { [ "$(on_patches | grep -c .)" = 1 ]; }
wait_until one_check
got=$(on_patches)
diag <<<"$got"
check "Patchwork: bootci-bisect fail on patch 3 alone, linking the bisection's page" eval '
	[[ "$got" == "[v1,3/4] drm/x: fast.testlist: run igt@core@bad, prüfe <über> & mehr | fail first bad patch of the series: 1 test(s) fail from it on (2 step(s)) http://localhost:8080/bisects/$build" ]]'
"$aggregator" bisect start "$build" --data "$data" >"$work/out" 2>&1
status=$?
check "bisect start of it again: refused (exit 1), it has one" \
	eval '[ $status = 1 ] && grep -q "build $build has a bisection already" "$work/out"'
stop_server
check "serve stops (exit 0)" test "$server_status" = 0

done_testing

#!/usr/bin/env bash
# The master against the real Patchwork 3.1.3 (../shared/patchwork/, unpacked here, on Debian's
# Django) on 127.0.0.1, as `nobody` when this runs as root:
#   pick-up     a 3-patch series mailed in with its cover (parse_mail, as a list would) is picked
#               up once: its mbox kept (and it applies with git am), pending bootci-fast on each
#               patch, read back through the REST API; a series missing a patch waits
#   once        a second poll and serve's poller after a restart pick nothing up again; the
#               missing patch mailed, serve picks the series up; a v2 supersedes the first
#   checks      `patchwork check` posts success on every patch once, asked twice
#   faults      Patchwork stopped (connection refused: said, the check waits in the store, posted
#               once Patchwork is back); a non-maintainer's token (403 said at the first poll,
#               the checks wait); a 500 and HTML where JSON belongs (said, nothing settled); a
#               series without an mbox and one whose mbox is 404 (skipped, said); a check
#               whose answer was lost (a 500 after Patchwork kept it) is read back, not posted again
#   builds      with a build-command, the "fast script" (a fresh clone of the test's git repository,
#               `git am` of the series' mbox, then a prebuilt image folder copied: bootci-builder is
#               not run, to keep the test fast): a series is built, published and registered with
#               its title and Message-ID, its fast tier queued; a series that does not apply gets
#               bootci-fast fail naming that with the log's link, read back from Patchwork; neither
#               is built again; serve serves the build log; a command that hangs is killed at
#               build-timeout, and a second poller meanwhile leaves the series to the first; with
#               mail.conf, the series that does not build gets one reply saying so; a command that
#               fails, or leaves no image, fails the series; serve stopped mid-build kills it
#   tiers       the fast tier's jobs ended (a run ingested, the jobs marked as the scheduler
#               does): bootci-fast success with the report's one-line summary and the matrix's
#               link; all abandoned: bootci-fast fail and bootci-full "not run: fast tier failed";
#               the full tier's jobs ended: bootci-full success; the gate skipped it (the tree's
#               full = never): bootci-full warning "not run" and why
#   reply       serve's sender (reply = final) queues the build's reply to the list and the
#               series' submitter, threaded on the series' Message-ID
#   latency     the series' build's stages in the store against Patchwork's API: its clock
#               starts at its patches' latest date, then pick-up, pending on every patch (as
#               Patchwork dates it), build, registration in order; `metrics` and serve's matrix
#               and metrics pages measure it from the series; while serve builds one series
#               (forever) it picks up the next and posts its pending check
#   badmsgid    a series whose Message-ID is no <left@right> (a stand-in Patchwork) is built and
#               registered without it
#   pages       a listing over three pages (the Link header's next): every series picked up,
#               oldest first; the next poll reads one page only; past 200 pages nothing is taken
# Skipped when the tarball or Debian's python3-django, python3-djangorestframework and
# python3-django-filters are absent.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

# shellcheck source=tests/aggregator/patchwork-lib.sh
. "$SRC/tests/aggregator/patchwork-lib.sh"
pw_test_begin
# The tests' own start: a Patchwork that does not start ends them.
pw_start() {
	pw_run || {
		echo "Bail out! Patchwork did not start:"
		diag <"$work/patchwork.log"
		exit 1
	}
}
fake_pid=
cleanup_patchwork() {
	[ -z "$pw_pid" ] || kill -TERM "$pw_pid" 2>/dev/null
	[ -z "$fake_pid" ] || kill -TERM "$fake_pid" 2>/dev/null
	cleanup
}
trap cleanup_patchwork EXIT
pw_start

# The "kernel tree": a git repository and the series mailed from it.
repo=$work/repo
pw_repo "$repo"
# series DIR SUBJECT FILE... [-v N]: one commit per FILE on a branch from base, mailed as a
# threaded series with a cover letter; the messages in DIR/*.patch
series() {
	local dir=$1 subject=$2 version=$3
	shift 3
	# Each series its own second: format-patch's Message-IDs carry the time.
	sleep 1
	git -C "$repo" checkout -q -B "work-$RANDOM" "$base_commit"
	for f in "$@"; do
		echo "$subject $f" >"$repo/$f"
		git -C "$repo" add "$f"
		git -C "$repo" commit -qm "igt: $subject: $f"
	done
	git -C "$repo" format-patch -q --cover-letter --thread=shallow -n -v "$version" \
		--add-header='List-Id: <bootci-test.lists.bootci.test>' -o "$dir" "$base_commit"
	sed -i "s/\*\*\* SUBJECT HERE \*\*\*/$subject/" "$dir"/*cover-letter.patch
}
# mbox OUT FILE...: the messages as one mbox
mbox() {
	local out=$1 f
	shift
	for f in "$@"; do
		cat "$f"
		echo
	done >"$out"
	chmod 0644 "$out"
}
series "$work/s1" "three changes" 1 a b c
series "$work/s2" "two changes" 1 d e
mbox "$work/first.mbox" "$work"/s1/*.patch "$work"/s2/*0000-cover-letter.patch "$work"/s2/*0001-*.patch
admin parse "$work/first.mbox" || { echo "Bail out! Patchwork did not take the first series"; exit 1; }

cat >"$data/patchwork.conf" <<CONF
[project lab]
url = $pw_url
project = bootci-test
token-file = $work/ci.token
poll = 1m
serve-url = http://localhost:8080
CONF

# poll [DATA]: one `patchwork poll`, its output in $work/poll.out and $out, its status in $status
poll() {
	"$aggregator" patchwork poll --data "${1:-$data}" >"$work/poll.out" 2>&1 && status=0 || status=$?
	out=$(cat "$work/poll.out")
	cat "$work/poll.out" >>"$work/polls.log"
}
# checks SERIES: the checks on SERIES's patches as Patchwork's API gives them
checks() { "$python" "$admin" api-checks "$pw_url" "$1"; }

# ---- pick-up ----
poll
if [ "$status" = 0 ] && grep -q "series 1 'three changes' v1 (3 patches) picked up: build pw-lab-1" <<<"$out" &&
	grep -q "series 2: 1 of 2 patch(es) received: it waits" <<<"$out" &&
	grep -q "3 check(s) posted" <<<"$out"; then
	ok "the complete series is picked up, the one missing a patch waits"
else
	not_ok "the complete series is picked up, the one missing a patch waits"
	diag <<<"$out"
fi

git clone -q "$repo" "$work/clone" && git -C "$work/clone" checkout -q "$base_commit"
if [ -s "$data/series/lab/1/series.mbox" ] &&
	git -C "$work/clone" -c user.name=t -c user.email=t@t am -q "$data/series/lab/1/series.mbox" &&
	[ "$(git -C "$work/clone" rev-list --count "$base_commit..HEAD")" = 3 ]; then
	ok "the series' mbox is kept in DATA/series/lab/1 and applies with git am"
else
	not_ok "the series' mbox is kept in DATA/series/lab/1 and applies with git am"
fi

expected_pending="1 bootci-fast pending ci http://localhost:8080/builds/pw-lab-1
2 bootci-fast pending ci http://localhost:8080/builds/pw-lab-1
3 bootci-fast pending ci http://localhost:8080/builds/pw-lab-1"
got=$(checks 1)
if [ "$got" = "$expected_pending" ]; then
	ok "pending bootci-fast on every patch, read back through Patchwork's API"
else
	not_ok "pending bootci-fast on every patch, read back through Patchwork's API"
	diag <<<"$got"
fi

# ---- once ----
poll
if [ "$status" = 0 ] && ! grep -q "picked up:" <<<"$out" && [ "$(checks 1)" = "$expected_pending" ]; then
	ok "a second poll picks nothing up and posts nothing again"
else
	not_ok "a second poll picks nothing up and posts nothing again"
	diag <<<"$out"
fi

BOOTCI_PATCHWORK_POLL=1s start_server
wait_until grep -q "patchwork lab: following project bootci-test on $pw_url, a poll every 1 s" \
	"$work/server.log"
# Two polls at least: the second restart's poll has run when its line is there twice.
sleep 2.5
if ! grep -q "picked up:" "$work/server.log" && [ "$(checks 1)" = "$expected_pending" ]; then
	ok "serve's poller after a restart picks nothing up again"
else
	not_ok "serve's poller after a restart picks nothing up again"
	diag <"$work/server.log"
fi

series "$work/s3" "three changes" 2 a b c
mbox "$work/second.mbox" "$work"/s2/*0002-*.patch "$work"/s3/*.patch
admin parse "$work/second.mbox" || { echo "Bail out! Patchwork did not take the second series"; exit 1; }
if wait_until grep -q "series 3 'three changes' v2 (3 patches) picked up: build pw-lab-3" "$work/server.log" &&
	grep -q "series 2 'two changes' v1 (2 patches) picked up: build pw-lab-2" "$work/server.log" &&
	grep -q "series 1 superseded by series 3 'three changes' v2" "$work/server.log"; then
	ok "serve picks up the series once complete, and a v2 that supersedes the first"
else
	not_ok "serve picks up the series once complete, and a v2 that supersedes the first"
	diag <"$work/server.log"
	curl -s "$pw_url/api/1.2/series/" | "$python" -c 'import json, sys
for s in json.load(sys.stdin):
    print(s["id"], s["name"], s["version"], s["received_all"], [p["id"] for p in s["patches"]])' | diag
fi
stop_server
"$aggregator" patchwork series --data "$data" >"$work/series.out" 2>&1
if grep -q "^lab 1 v1 superseded build pw-lab-1: superseded by series 3 (v2) 'three changes'" "$work/series.out" &&
	grep -q "^lab 2 v1 picked up build pw-lab-2 'two changes'" "$work/series.out" &&
	[ "$(grep -c '^lab ' "$work/series.out")" = 3 ]; then
	ok "the store holds each series once, the superseded one noted"
else
	not_ok "the store holds each series once, the superseded one noted"
	diag <"$work/series.out"
fi

# ---- checks ----
"$aggregator" patchwork check 3 bootci-fast success --description "fast: 12 pass" \
	--url http://localhost:8080/builds/pw-lab-3 --data "$data" >"$work/check.out" 2>&1 && s1=0 || s1=$?
"$aggregator" patchwork check 3 bootci-fast success --data "$data" >>"$work/check.out" 2>&1 && s2=0 || s2=$?
got=$(checks 3 | grep -c 'bootci-fast success ci http://localhost:8080/builds/pw-lab-3')
if [ "$s1" = 0 ] && [ "$s2" = 0 ] && [ "$got" = 3 ] &&
	grep -q "check bootci-fast success is already there on every patch" "$work/check.out"; then
	ok "a check asked for twice is posted once on every patch"
else
	not_ok "a check asked for twice is posted once on every patch ($s1 $s2 $got)"
	diag <"$work/check.out"
fi
"$aggregator" patchwork check 3 'ci/fast' success --data "$data" >"$work/check.out" 2>&1 && s1=0 || s1=$?
"$aggregator" patchwork check 3 bootci-fast passed --data "$data" >>"$work/check.out" 2>&1 && s2=0 || s2=$?
"$aggregator" patchwork poll extra --data "$data" >>"$work/check.out" 2>&1 && s3=0 || s3=$?
if [ "$s1" = 2 ] && [ "$s2" = 2 ] && grep -q "context 'ci/fast': Patchwork takes a slug" "$work/check.out" &&
	grep -q "state 'passed': pending, success, warning or fail" "$work/check.out" &&
	[ "$s3" = 2 ] && grep -q "'poll' with a wrong number of operands" "$work/check.out"; then
	ok "a bad context, state or operand count is a usage error naming it"
else
	not_ok "a bad context, state or operand count is a usage error naming it"
	diag <"$work/check.out"
fi

# ---- faults ----
pw_stop
poll
"$aggregator" patchwork check 2 bootci-full fail --description "full: not run: fast tier failed" \
	--data "$data" >"$work/check.out" 2>&1 && s1=0 || s1=$?
if [ "$status" = 1 ] && grep -q "Couldn't connect to server: nothing polled" <<<"$out" &&
	[ "$s1" = 1 ] && grep -q "2 check(s) wait for the next poll" "$work/check.out"; then
	ok "Patchwork stopped: said at the poll and the check, which waits in the store"
else
	not_ok "Patchwork stopped: said at the poll and the check, which waits in the store"
	diag <<<"$out"
	diag <"$work/check.out"
fi
pw_start
poll
poll
got=$(checks 2 | grep -c 'bootci-full fail')
if [ "$status" = 0 ] && [ "$got" = 2 ] && grep -q "2 check(s) posted" "$work/polls.log"; then
	ok "Patchwork back: the waiting check is posted once on each patch"
else
	not_ok "Patchwork back: the waiting check is posted once on each patch ($got)"
	diag <"$work/polls.log"
fi

mkdir -p "$work/visitor"
sed "s|$work/ci.token|$work/visitor.token|" "$data/patchwork.conf" >"$work/visitor/patchwork.conf"
poll "$work/visitor"
if grep -q "the token of $work/visitor.token is no maintainer's of project bootci-test: Patchwork will refuse its checks (403)" <<<"$out" &&
	grep -q "403: Patchwork refuses checks from the token of $work/visitor.token" <<<"$out" &&
	! checks 3 | grep -q visitor; then
	ok "a non-maintainer's token: 403 said at the first poll, its checks wait"
else
	not_ok "a non-maintainer's token: 403 said at the first poll, its checks wait"
	diag <<<"$out"
fi
pw_stop

# fake_start MODE: the broken stand-in, its URL in $fake_url
fake_start() {
	[ -z "$fake_pid" ] || kill -TERM "$fake_pid" 2>/dev/null
	rm -f "$work/fake.port"
	"$python" "$admin" fake "$work/fake.port" "$1" &
	fake_pid=$!
	wait_until test -s "$work/fake.port"
	fake_url=http://127.0.0.1:$(cat "$work/fake.port")
	mkdir -p "$work/fake-$1"
	sed "s|^url = .*|url = $fake_url|" "$data/patchwork.conf" >"$work/fake-$1/patchwork.conf"
}
fake_start 500
poll "$work/fake-500"
status_500=$status
out_500=$out
fake_start garbage
poll "$work/fake-garbage"
if [ "$status_500" = 1 ] && grep -q "Patchwork answered 500 (<h1>Server Error (500)</h1>): nothing new taken; next poll retries" <<<"$out_500" &&
	[ "$status" = 1 ] && grep -q "series listing: not JSON .*starting '<html>maintenance</html>'" <<<"$out" &&
	[ -z "$("$aggregator" patchwork series --data "$work/fake-garbage")" ]; then
	ok "a 500 and HTML where JSON belongs are said, nothing is settled"
else
	not_ok "a 500 and HTML where JSON belongs are said, nothing is settled"
	diag <<<"$out_500"
	diag <<<"$out"
fi
fake_start nombox
poll "$work/fake-nombox"
"$aggregator" patchwork series --data "$work/fake-nombox" >"$work/series.out" 2>&1
if [ "$status" = 0 ] && grep -q "series 1 'none': no mbox: skipped, not built" <<<"$out" &&
	grep -q "series 2 'gone': no mbox (.*/series/2/mbox/ answered 404): skipped, not built" <<<"$out" &&
	[ "$(grep -c '^lab [12] v1 skipped' "$work/series.out")" = 2 ] &&
	[ ! -e "$work/fake-nombox/series/lab/2/series.mbox" ]; then
	ok "a series without an mbox, and one whose mbox is 404, are skipped and said"
else
	not_ok "a series without an mbox, and one whose mbox is 404, are skipped and said"
	diag <<<"$out"
	diag <"$work/series.out"
fi
fake_start lost
poll "$work/fake-lost"
poll "$work/fake-lost"
poll "$work/fake-lost"
posts=$(curl -s "$fake_url/posts")
"$aggregator" patchwork series --data "$work/fake-lost" >"$work/series.out" 2>&1
if [ "$posts" = '{"50": 1, "51": 1}' ] &&
	grep -q "patch 50: check bootci-fast pending was posted before: kept" "$work/polls.log" &&
	grep -q "patch 51: check bootci-fast pending was posted before: kept" "$work/polls.log" &&
	[ "$(grep -c 'bootci-fast pending: posted' "$work/series.out")" = 2 ]; then
	ok "a check whose answer was lost (a 500) is read back from Patchwork, not posted again"
else
	not_ok "a check whose answer was lost (a 500) is read back from Patchwork, not posted again ($posts)"
	diag <"$work/polls.log"
	diag <"$work/series.out"
fi

fake_start pages
poll "$work/fake-pages"
picked=$(grep -o "series [0-9] 'series [0-9]' v1 (1 patch) picked up" "$work/poll.out" | cut -d' ' -f2 | tr -d '\n')
poll "$work/fake-pages"
pages=$(curl -s "$fake_url/pages")
if [ "$picked" = 123456 ] && [ "$pages" = '[1, 2, 3, 1]' ] && ! grep -q "picked up:" "$work/poll.out"; then
	ok "a listing over three pages: every series picked up oldest first; the next poll reads one page"
else
	not_ok "a listing over three pages: every series picked up oldest first; the next poll reads one page ($picked $pages)"
	diag <"$work/polls.log"
fi

fake_start endless
poll "$work/fake-endless"
if [ "$status" = 1 ] &&
	grep -q "more than 200 pages of series above series 0: set first-series in patchwork.conf" "$work/poll.out" &&
	[ -z "$("$aggregator" patchwork series --data "$work/fake-endless")" ]; then
	ok "past 200 pages of new series nothing is taken, and first-series is named"
else
	not_ok "past 200 pages of new series nothing is taken, and first-series is named"
	diag <"$work/poll.out"
fi

# ---- builds ----
# The lab's build command, the "fast script": a fresh clone of the kernel tree (here the test's
# small git repository) at the base branch, `git am` of the series' mbox (exit 3 when it does not
# apply), then a prebuilt test image copied into the output folder instead of running
# bootci-builder, to keep the test fast; the commit built in OUT/commit.
pw_start
image=$work/image
pw_image "$image"
pw_build_command "$work/build-cmd" "$image"
printf '#!/bin/sh\necho building forever\nexec sleep 61\n' >"$work/hang-cmd"
chmod 0755 "$work/hang-cmd"
git -C "$repo" branch -f ci-base "$base_commit"
last=$(curl -s "$pw_url/api/1.2/series/?order=-id&per_page=1" | "$python" -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
good=$((last + 1))
bad=$((last + 2))
third=$((last + 3))
series "$work/s4" "good series" 1 f g
# A patch against a README the base does not have: it does not apply.
git -C "$repo" checkout -q -B nowhere "$base_commit"
echo other >"$repo/README"
git -C "$repo" commit -qam "README: other"
mid=$(git -C "$repo" rev-parse HEAD)
# Its own second: format-patch's Message-IDs carry the time.
sleep 1
echo more >"$repo/README"
git -C "$repo" commit -qam "README: more"
git -C "$repo" format-patch -q --cover-letter --thread=shallow -n -v 1 \
	--add-header='List-Id: <bootci-test.lists.bootci.test>' -o "$work/s5" "$mid"
sed -i "s/\*\*\* SUBJECT HERE \*\*\*/bad series/" "$work"/s5/*cover-letter.patch
mbox "$work/third.mbox" "$work"/s4/*.patch
mbox "$work/fourth.mbox" "$work"/s5/*.patch
series "$work/s6" "third series" 1 h
mbox "$work/fifth.mbox" "$work"/s6/*.patch
if ! { admin parse "$work/third.mbox" && admin parse "$work/fourth.mbox" && admin parse "$work/fifth.mbox"; }; then
	echo "Bail out! Patchwork did not take the build series"
	exit 1
fi
mkdir -p "$work/builds"
cat >"$work/builds/patchwork.conf" <<CONF
[project lab]
url = $pw_url
project = bootci-test
token-file = $work/ci.token
serve-url = http://localhost:8080
first-series = $good
build-command = $work/build-cmd
base = $repo
branch = ci-base
tree = t
build-timeout = 60s
CONF
cat >"$work/builds/machines.conf" <<CONF
[machine solo]
mac = 52:54:00:00:00:01
[tree t]
full = always
CONF
poll "$work/builds"
msgid=$(grep -i -m1 '^Message-Id:' "$work"/s4/*cover-letter.patch | sed 's/^[^:]*: *//')
row=$(sqlite3 "$work/builds/bootci.sqlite" \
	"SELECT tree, tier, series_title, message_id, length(commit_id) FROM builds WHERE name = 'pw-lab-$good'")
if [ "$status" = 0 ] && grep -q "series $good: built and published as pw-lab-$good (tree t, commit [0-9a-f]\{40\})" <<<"$out" &&
	grep -q "pw-lab-$good: fast tier queued, [1-9][0-9]* job(s)" <<<"$out" &&
	[ "$row" = "t|fast|good series|$msgid|40" ] &&
	grep -q "^Applying: igt: good series: g" "$work/builds/series/lab/$good/build.log"; then
	ok "a series picked up is built by the build command, registered with its title and Message-ID, its fast tier queued"
else
	not_ok "a series picked up is built by the build command, registered with its title and Message-ID, its fast tier queued"
	diag <<<"$out"
	diag <<<"$row / $msgid"
fi

# The good series' stages as the store recorded them, against Patchwork's API: the clock starts
# at its patches' latest date; it was picked up after that, pending went out on every patch
# (Patchwork's own date of the last pending check, within a second of the store's) before the
# build command started, and the build was registered after the command ended.
read -r api_complete api_pending api_patches api_with_pending < <("$python" "$admin" api-times "$pw_url" "$good")
stages=$(sqlite3 -separator ' ' "$work/builds/bootci.sqlite" \
	"SELECT (SELECT printf('%.6f', at) FROM build_stages WHERE build = 'pw-lab-$good' AND stage = 'series'),
	        (SELECT printf('%.6f', seen) FROM patchwork_series WHERE build = 'pw-lab-$good'),
	        (SELECT printf('%.6f', MAX(posted)) FROM patchwork_checks WHERE series = $good AND state = 'pending'),
	        (SELECT printf('%.6f', at) FROM build_stages WHERE build = 'pw-lab-$good' AND stage = 'build started'),
	        (SELECT printf('%.6f', at) FROM build_stages WHERE build = 'pw-lab-$good' AND stage = 'build ended'),
	        (SELECT printf('%.6f', registered) FROM builds WHERE name = 'pw-lab-$good')")
read -r st_series st_noticed st_pending st_started st_ended st_registered <<<"$stages"
if [ "$api_patches" = 2 ] && [ "$api_with_pending" = 2 ] && [ "$st_series" = "$api_complete" ] &&
	"$python" -c 'import sys
s, n, p, b, e, r, api_p = map(float, sys.argv[1:])
sys.exit(0 if s <= n <= p <= b <= e <= r and abs(api_p - p) < 1.5 else 1)' \
		"$st_series" "$st_noticed" "$st_pending" "$st_started" "$st_ended" "$st_registered" "$api_pending"; then
	ok "the build's clock starts at its patches' latest date on Patchwork; picked up, pending, built and registered in that order"
else
	not_ok "the build's clock starts at its patches' latest date on Patchwork; picked up, pending, built and registered in that order"
	diag <<<"API: $api_complete $api_pending $api_patches $api_with_pending"
	diag <<<"store: $stages"
fi

described() {
	curl -s "$pw_url/api/1.2/series/$1/" | "$python" -c 'import json, sys, urllib.request
for p in sorted(json.load(sys.stdin)["patches"], key=lambda p: p["id"]):
    for c in json.load(urllib.request.urlopen(p["url"] + "checks/")):
        print(c["context"], c["state"], c["description"], c["target_url"])'
}
got=$(described "$bad" | grep "bootci-fast fail")
if grep -q "series $bad: does not apply to $repo ci-base: bootci-fast fail queued" <<<"$out" &&
	[ "$got" = "bootci-fast fail does not apply to $repo ci-base http://localhost:8080/series/lab/$bad/build.log" ] &&
	grep -q "^bootci: exit status 3" "$work/builds/series/lab/$bad/build.log" &&
	! sqlite3 "$work/builds/bootci.sqlite" "SELECT name FROM builds" | grep -q "pw-lab-$bad"; then
	ok "a series that does not apply gets bootci-fast fail naming that with the log's link, read back from Patchwork"
else
	not_ok "a series that does not apply gets bootci-fast fail naming that with the log's link, read back from Patchwork"
	diag <<<"$got"
	diag <"$work/builds/series/lab/$bad/build.log"
fi
poll "$work/builds"
if [ "$status" = 0 ] && ! grep -q "building" <<<"$out" && grep -q "0 built, 0 failed to build" <<<"$out"; then
	ok "a series built or failed is not built again"
else
	not_ok "a series built or failed is not built again"
	diag <<<"$out"
fi

start_server --data "$work/builds"
curl -s -o "$work/log.got" -w '%{http_code} %{content_type}\n' "$base/series/lab/$bad/build.log" >"$work/log.status"
code_other=$(curl -s -o /dev/null -w '%{http_code}' "$base/series/lab/99999/build.log")
code_bad=$(curl -s -o /dev/null -w '%{http_code}' "$base/series/..%2Fx/1/build.log")
stop_server
if [ "$(cat "$work/log.status")" = "200 text/plain; charset=utf-8" ] &&
	cmp -s "$work/log.got" "$work/builds/series/lab/$bad/build.log" &&
	[ "$code_other" = 404 ] && [ "$code_bad" = 400 ]; then
	ok "serve serves a series' build log at the fail check's link; none is 404, a bad name 400"
else
	not_ok "serve serves a series' build log at the fail check's link; none is 404, a bad name 400 ($code_other $code_bad)"
	diag <"$work/log.status"
fi

# ---- the checks after the tiers ----
# The good series' fast tier ends with a run of its machine (ingested, its job done, as the
# scheduler records it); the third series' fast jobs are all abandoned, no run back. (serve ran
# above with the scheduler on: the tree's full = always may have queued full jobs already.)
"$python" "$SRC/tests/aggregator/report-runs.py" "$work/runs-good" core@a=pass core@b=pass >/dev/null
"$aggregator" ingest --data "$work/builds" --machine solo --build "pw-lab-$good" "$work/runs-good" >>"$work/setup.log" 2>&1
sqlite3 "$work/builds/bootci.sqlite" \
	"UPDATE schedule_jobs SET state = 'done' WHERE tier = 'fast' AND build = (SELECT id FROM builds WHERE name = 'pw-lab-$good');
	 UPDATE schedule_jobs SET state = 'abandoned' WHERE tier = 'fast' AND build = (SELECT id FROM builds WHERE name = 'pw-lab-$third')"
# bootci-fast waits for the gate's decision, which the scheduler's turn in serve records once the
# fast tier is judged (an always-tree's too: its possible new issues would be rerun first).
gates_decided() {
	[ "$(sqlite3 "$work/builds/bootci.sqlite" "SELECT COUNT(*) FROM schedule_gates g JOIN builds b
		ON b.id = g.build WHERE b.name IN ('pw-lab-$good', 'pw-lab-$third')")" = 2 ]
}
start_server --data "$work/builds"
wait_until gates_decided
stop_server
poll "$work/builds"
got_good=$(described "$good" | grep -c "^bootci-fast success fast: 2 result(s) on 1 machine(s): 0 possible new issue(s), 0 known, 0 flaky, 0 fixed, 0 warning(s) http://localhost:8080/builds/pw-lab-$good$")
got_third=$(described "$third" | grep -E "^bootci-(fast|full) fail")
if [ "$status" = 0 ] && [ "$got_good" = 2 ] && [ "$(described "$good" | grep -c "bootci-full")" = 0 ] &&
	[ "$got_third" = "bootci-fast fail fast: no run came back from the fast tier's machines http://localhost:8080/builds/pw-lab-$third
bootci-full fail full: not run: fast tier failed http://localhost:8080/builds/pw-lab-$third" ]; then
	ok "the fast tier ended: bootci-fast with the report's summary and the matrix's link; failed: bootci-full not run"
else
	not_ok "the fast tier ended: bootci-fast with the report's summary and the matrix's link; failed: bootci-full not run"
	diag <<<"$out"
	described "$good" | diag
	diag <<<"$got_third"
fi
sqlite3 "$work/builds/bootci.sqlite" \
	"UPDATE schedule_jobs SET state = 'done' WHERE tier = 'full' AND build = (SELECT id FROM builds WHERE name = 'pw-lab-$good');
	 INSERT INTO schedule_jobs (machine, build, tier, shard, shards, testlist, run_id, state, boots, queued)
	 SELECT m.id, b.id, 'full', 0, 1, '', 'full-1', 'done', 1, 0 FROM machines m, builds b
	 WHERE m.name = 'solo' AND b.name = 'pw-lab-$good'"
poll "$work/builds"
poll "$work/builds"
got=$(described "$good" | grep -c "^bootci-full success full: 2 result(s) on 1 machine(s): 0 possible new issue(s)")
if [ "$status" = 0 ] && [ "$got" = 2 ] && [ "$(described "$good" | grep -c '^bootci-fast success')" = 2 ]; then
	ok "the full tier ended: bootci-full success with the summary, once on every patch"
else
	not_ok "the full tier ended: bootci-full success with the summary, once on every patch ($got)"
	diag <"$work/polls.log"
	described "$good" | diag
fi

# ---- the reply ----
# serve's sender with reply = final queues the reply of a build whose jobs have all ended; no
# SMTP server answers, so it stays in the outbox to be read. The scheduler stays off (no
# machines.conf): nothing queues more jobs meanwhile.
rm "$work/builds/machines.conf"
printf 'url = smtp://127.0.0.1:1/lab.example\nfrom = bootci <ci@lab.example>\nto = list <bootci-test@lists.bootci.test>\ninterval = 1s\nreply = final\n' \
	>"$work/builds/mail.conf"
reply_listed() { "$aggregator" mail list --data "$work/builds" | awk -F'\t' -v b="pw-lab-$good" '$6 == b' | grep -q .; }
start_server --data "$work/builds"
wait_until reply_listed
stop_server
line=$("$aggregator" mail list --data "$work/builds" | awk -F'\t' -v b="pw-lab-$good" '$6 == b')
reply_id=$(cut -f1 <<<"$line")
"$aggregator" mail show "$reply_id" --data "$work/builds" >"$work/reply.eml" 2>&1
if [ "$(cut -f7 <<<"$line")" = "bootci-test@lists.bootci.test,ann@bootci.test" ] &&
	grep -q "^In-Reply-To: $msgid"$'\r$' "$work/reply.eml" &&
	grep -q "^To: list <bootci-test@lists.bootci.test>, ann@bootci.test"$'\r$' "$work/reply.eml"; then
	ok "the final report's reply is queued to the list and the series' author, threaded on its Message-ID"
else
	not_ok "the final report's reply is queued to the list and the series' author, threaded on its Message-ID"
	diag <<<"$line"
	diag <"$work/reply.eml"
	tail -20 "$work/server.log" | diag
fi

# The metrics and the build's matrix page measure the good series' build from the series: its
# start and stages as the store has them, the series' time as Patchwork's API gives it.
"$aggregator" metrics --data "$work/builds" --from 0 --to $(($(date +%s) + 60)) >"$work/metrics.json" 2>&1
start_server --data "$work/builds"
curl -s "$base/builds/pw-lab-$good" >"$work/good.html"
curl -s "$base/metrics?from=0&to=$(($(date +%s) + 60))" >"$work/metrics.html"
stop_server
read -r api_complete _ < <("$python" "$admin" api-times "$pw_url" "$good")
got=$("$python" - "$work/metrics.json" "pw-lab-$good" "$api_complete" "$st_noticed" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
b = next(b for b in m['builds'] if b['name'] == sys.argv[2])
s = b['stages']
complete, noticed = float(sys.argv[3]), float(sys.argv[4])
checks = [
    b['clock_start'] == 'series', abs(b['start'] - complete) < 1e-3,
    abs(s['series'] - complete) < 1e-3, abs(s['noticed'] - noticed) < 1e-3,
    s['pending'] is not None, s['build_started'] <= s['build_ended'] <= s['registered'],
    s['verdict'] is not None and s['verdict_posted'] is not None,
    s['reply_queued'] is not None and s['reply_sent'] is None,
    abs(b['to_first_result'] - (s['last_result'] - b['start'])) < 1e-3,
    any(x['stage'] == 'noticed' and x['builds'] >= 1 and x['spent_on'] == "waiting for Patchwork's poll"
        for x in m['stages']),
]
print(' '.join('1' if c else '0' for c in checks))
PY
)
series_utc=$(date -u -d "@${api_complete%.*}" '+%Y-%m-%d %H:%M:%S')
if [ "$got" = "1 1 1 1 1 1 1 1 1 1" ] &&
	grep -q "The clock starts when the series was complete on Patchwork." "$work/good.html" &&
	grep -q "data-stage=\"series\"><td>series complete on Patchwork (its last patch's date)</td><td>$series_utc</td><td>0 s</td>" "$work/good.html" &&
	grep -q "data-stage=\"noticed\"><td>picked up by the master's poll</td>.*<td>waiting for Patchwork's poll</td>" "$work/good.html" &&
	grep -q "pw-lab-$good</a></td><td>[a-z]*</td><td>${series_utc% *} ${series_utc:11:5}</td><td>series complete</td>" "$work/metrics.html"; then
	ok "metrics and the matrix page measure the series' build from its series on Patchwork, stage by stage"
else
	not_ok "metrics and the matrix page measure the series' build from its series on Patchwork, stage by stage ($got)"
	diag <"$work/metrics.json"
	grep -A20 "from the mail" "$work/good.html" | diag
fi

mkdir -p "$work/hang"
sed -e "s|^build-command = .*|build-command = $work/hang-cmd|" -e "s|^build-timeout = .*|build-timeout = 3s|" \
	-e "s|^first-series = .*|first-series = $third|" "$work/builds/patchwork.conf" >"$work/hang/patchwork.conf"
cp "$work/builds/mail.conf" "$work/hang/mail.conf"
start=$SECONDS
"$aggregator" patchwork poll --data "$work/hang" >"$work/hang1.out" 2>&1 &
first_poll=$!
wait_until grep -qs "building forever" "$work/hang/series/lab/$third/build.log"
poll "$work/hang"
second=$out
wait "$first_poll"
out=$(cat "$work/hang1.out")
if [ $((SECONDS - start)) -lt 30 ] &&
	grep -q "series $third: another process builds it: left to it" <<<"$second" &&
	grep -q "series $third: does not build: killed after build-timeout (3 s): bootci-fast fail queued" <<<"$out" &&
	grep -q "^bootci: killed after build-timeout (3 s)" "$work/hang/series/lab/$third/build.log" &&
	! pgrep -f "sleep 61" >/dev/null; then
	ok "a build command that hangs is killed at build-timeout and the series fails; a second poller leaves it alone"
else
	not_ok "a build command that hangs is killed at build-timeout and the series fails; a second poller leaves it alone"
	diag <<<"$out"
	diag <<<"$second"
fi
third_msgid=$(grep -i -m1 '^Message-Id:' "$work"/s6/*cover-letter.patch | sed 's/^[^:]*: *//')
line=$("$aggregator" mail list --data "$work/hang" | awk -F'\t' -v b="pw-lab-$third" '$6 == b')
"$aggregator" mail show "$(cut -f1 <<<"$line")" --data "$work/hang" >"$work/fail-reply.eml" 2>&1
if [ "$("$aggregator" mail list --data "$work/hang" | wc -l)" = 1 ] &&
	[ "$(cut -f7 <<<"$line")" = "bootci-test@lists.bootci.test,ann@bootci.test" ] &&
	grep -q "^In-Reply-To: $third_msgid"$'\r$' "$work/fail-reply.eml" &&
	[ "$("$python" -c 'import email, email.header, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
print(str(email.header.make_header(email.header.decode_header(m["Subject"]))))' "$work/fail-reply.eml")" = "Re: third series" ] &&
	grep -q "^bootci did not test this series: it does not build: killed after build-timeout (3 s)."$'\r$' "$work/fail-reply.eml" &&
	grep -q "^The build's log: http://localhost:8080/series/lab/$third/build.log"$'\r$' "$work/fail-reply.eml"; then
	ok "a series that does not build gets one reply to the list and its author, threaded, saying why with the log's link"
else
	not_ok "a series that does not build gets one reply to the list and its author, threaded, saying why with the log's link"
	diag <<<"$line"
	diag <"$work/fail-reply.eml"
fi
# serve stopped mid-build: the command is killed at once, the series not failed (built again later).
mkdir -p "$work/stop"
sed -e "s|^build-command = .*|build-command = $work/hang-cmd|" -e "s|^first-series = .*|first-series = $third|" \
	"$work/builds/patchwork.conf" >"$work/stop/patchwork.conf"
start_server --data "$work/stop"
wait_until grep -qs "building forever" "$work/stop/series/lab/$third/build.log"
start=$SECONDS
stop_server
if [ $((SECONDS - start)) -lt 10 ] && grep -q "^bootci: killed: the master stops" "$work/stop/series/lab/$third/build.log" &&
	[ "$(sqlite3 "$work/stop/bootci.sqlite" "SELECT count(*) FROM patchwork_checks WHERE state = 'fail'")" = 0 ] &&
	! pgrep -f "sleep 61" >/dev/null; then
	ok "serve stopped mid-build kills the build command at once and leaves the series to build again"
else
	not_ok "serve stopped mid-build kills the build command at once and leaves the series to build again"
	tail -5 "$work/server.log" | diag
	diag <"$work/stop/series/lab/$third/build.log"
fi

# build-command /bin/false: does not build; /bin/true leaves no image: publish refuses it.
for cmd in false true; do
	mkdir -p "$work/cmd-$cmd"
	sed -e "s|^build-command = .*|build-command = /bin/$cmd|" -e "s|^first-series = .*|first-series = $third|" \
		"$work/builds/patchwork.conf" >"$work/cmd-$cmd/patchwork.conf"
	poll "$work/cmd-$cmd"
	cp "$work/poll.out" "$work/cmd-$cmd.out"
done
if grep -q "series $third: does not build: the build command exited 1: bootci-fast fail queued" "$work/cmd-false.out" &&
	grep -q "series $third: does not build: its image was refused: .*manifest.*: bootci-fast fail queued" "$work/cmd-true.out" &&
	! sqlite3 "$work/cmd-true/bootci.sqlite" "SELECT name FROM builds" | grep -q .; then
	ok "a build command that fails, or leaves no image, fails the series and registers nothing"
else
	not_ok "a build command that fails, or leaves no image, fails the series and registers nothing"
	diag <"$work/cmd-false.out"
	diag <"$work/cmd-true.out"
fi
# The tree's full = never: the scheduler's gate skips the full tier (its decision recorded as the
# scheduler does); bootci-full says it was not run and why.
mkdir -p "$work/never"
sed -e "s|^first-series = .*|first-series = $good|" "$work/builds/patchwork.conf" >"$work/never/patchwork.conf"
printf '[machine solo]\nmac = 52:54:00:00:00:01\n[tree t]\nfull = never\n' >"$work/never/machines.conf"
poll "$work/never"
"$aggregator" ingest --data "$work/never" --machine solo --build "pw-lab-$good" "$work/runs-good" >>"$work/setup.log" 2>&1
sqlite3 "$work/never/bootci.sqlite" \
	"UPDATE schedule_jobs SET state = 'done' WHERE build = (SELECT id FROM builds WHERE name = 'pw-lab-$good');
	 INSERT INTO schedule_gates (build, decision, decided)
	 SELECT id, 'skipped: the tree never runs it', 0 FROM builds WHERE name = 'pw-lab-$good'"
poll "$work/never"
got=$(sqlite3 "$work/never/bootci.sqlite" \
	"SELECT DISTINCT context || ' ' || state || ' ' || description FROM patchwork_checks
	 WHERE series = $good AND state <> 'pending' ORDER BY context")
if [ "$got" = "bootci-fast success fast: 2 result(s) on 1 machine(s): 0 possible new issue(s), 0 known, 0 flaky, 0 fixed, 0 warning(s)
bootci-full warning full: not run: the tree never runs it" ]; then
	ok "the gate skipped the full tier: bootci-full warning, not run and why"
else
	not_ok "the gate skipped the full tier: bootci-full warning, not run and why"
	diag <<<"$got"
	diag <<<"$out"
fi

# Patchwork down: the series picked up before (here with no build-command yet) are built anyway.
mkdir -p "$work/down"
sed -e "/^build-command = /d" -e "s|^first-series = .*|first-series = $good|" \
	"$work/builds/patchwork.conf" >"$work/down/patchwork.conf"
poll "$work/down"
picked=$(grep -c "picked up: build" <<<"$out")
sed -e "s|^first-series = .*|first-series = $good|" "$work/builds/patchwork.conf" >"$work/down/patchwork.conf"
pw_stop
poll "$work/down"
if [ "$picked" = 3 ] && [ "$status" = 1 ] && grep -q "Couldn't connect to server: nothing polled" <<<"$out" &&
	grep -q "series $good: built and published as pw-lab-$good" <<<"$out" &&
	grep -q "series $bad: does not apply to $repo ci-base: bootci-fast fail queued" <<<"$out"; then
	ok "Patchwork down: the series picked up before are built all the same"
else
	not_ok "Patchwork down: the series picked up before are built all the same ($picked)"
	diag <<<"$out"
fi

# A series whose Message-ID publish would refuse: built and registered without it, said.
fake_start badmsgid
printf '#!/bin/sh\ncp "%s"/* "%s/"\n' "$image" "\$4" >"$work/copy-cmd"
chmod 0755 "$work/copy-cmd"
printf 'build-command = %s\nbase = nowhere\n' "$work/copy-cmd" >>"$work/fake-badmsgid/patchwork.conf"
poll "$work/fake-badmsgid"
if grep -q "series 7: its Message-ID is not one (.*): build pw-lab-7 registered without it, no reply" <<<"$out" &&
	grep -q "series 7: built and published as pw-lab-7" <<<"$out" &&
	[ "$(sqlite3 "$work/fake-badmsgid/bootci.sqlite" "SELECT quote(message_id) FROM builds WHERE name = 'pw-lab-7'")" = NULL ]; then
	ok "a series whose Message-ID is no <left@right> is built and registered without it, said"
else
	not_ok "a series whose Message-ID is no <left@right> is built and registered without it, said"
	diag <<<"$out"
fi

# serve builds apart from its polls: while a series builds (forever), a series mailed in is
# picked up and gets pending on its patch at the next poll.
pw_start
mkdir -p "$work/apart"
sed -e "s|^build-command = .*|build-command = $work/hang-cmd|" -e "s|^first-series = .*|first-series = $third|" \
	"$work/builds/patchwork.conf" >"$work/apart/patchwork.conf"
BOOTCI_PATCHWORK_POLL=1s start_server --data "$work/apart"
wait_until grep -qs "building forever" "$work/apart/series/lab/$third/build.log"
series "$work/s7" "while building" 1 i
mbox "$work/sixth.mbox" "$work"/s7/*.patch
admin parse "$work/sixth.mbox" || { echo "Bail out! Patchwork did not take the sixth series"; exit 1; }
fourth=$((third + 1))
with_pending() { [ "$("$python" "$admin" api-times "$pw_url" "$fourth" | cut -d' ' -f3,4)" = "1 1" ]; }
if wait_until grep -q "series $fourth 'while building' v1 (1 patch) picked up" "$work/server.log" &&
	wait_until with_pending && ! grep -q "^bootci: " <(tail -n +2 "$work/apart/series/lab/$third/build.log"); then
	ok "while a series builds, serve picks up the next one and posts its pending check"
else
	not_ok "while a series builds, serve picks up the next one and posts its pending check"
	tail -20 "$work/server.log" | diag
fi
stop_server

done_testing

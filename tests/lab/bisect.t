#!/usr/bin/env bash
# The master bisects a regressed series on its own lab (issue 37): `make demo`'s list and lab
# (tests/lab/list.sh: the real Patchwork and an SMTP server; tests/lab/loop.sh: a master, two
# QEMU machines of one shard group powered by their ipmi_sim BMCs, consoles through ser2net),
# its tree's full tier never run, `bisect-steps = 4`. The inventory's reruns: 1 for A (a panic
# fails every run: each possible new issue rerun once on each machine that showed it, each bisect
# step run once), then 2 for B (machines.conf rewritten once A is named; the master re-reads it):
# each possible new issue rerun twice on each machine that showed it and each bisect step run
# twice, so a flake failing one run in three then passes somewhere, 8 times in 9 for a step,
# before anything is named.
#   A: a series of 8 patches whose fifth adds igt@igt_kernel@panic to fast.testlist, the
#      others harmless text. Both machines panic in its fast tier; the master then bisects it
#      by itself and names patch 5 of 8 (subject, Message-ID) in at most 4 steps: in its log,
#      in `bisect show`, on serve's /bisects/BUILD page, in a `bootci-bisect` fail check on that
#      patch alone (Patchwork's REST API) and in a follow-up mail threaded on the series. The
#      candidates below patch 5 do not list the test: judged without booting a machine.
#   B: the tree moves on to run igt_basic@flaky (fails one run in three) in its fast tier, a
#      build of it gives the test a history, then a series of 3 harmless patches: whatever the
#      dice say, no first bad patch is ever named for it (its bisect, when one starts, ends
#      "not reproduced" or "inconclusive"); which case happened goes to the TAP log.
# The machines' time is what this costs, so phases overlap where nothing they prove depends on
# the order: series A is mailed as soon as base-1 is published (each machine hands out its tier
# jobs in the order queued, so base-1's runs come first: they are A's baseline), and the tree's
# next commit, base-2, is built on a branch of its own and published once A's first booting
# step is queued (bisect jobs go first; the machine the step does not use runs base-2 meanwhile);
# the branch becomes master, which the master builds series from, only once A's verdict is in.
# Skipped when ser2net, ipmi_sim, aiosmtpd or Patchwork (tests/aggregator/patchwork-lib.sh)
# cannot run here. Its time in all is the last TAP comment.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"
# shellcheck source=tests/lab/loop.sh
. "$(dirname "$0")/loop.sh"

AGGREGATOR=${BOOTCI_AGGREGATOR:-$BUILD/host/bin/bootci-aggregator}
TEST_IMAGE=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
LOOP_WORK=$BUILD/lab/bisect
# shellcheck source=tests/lab/list.sh
. "$(dirname "$0")/list.sh"

if ! command -v ser2net >/dev/null || ! command -v ipmi_sim >/dev/null; then
	echo "1..0 # SKIP ser2net or ipmi_sim is not installed (Debian: ser2net, openipmi)"
	exit 0
fi
if ! /usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null; then
	echo "1..0 # SKIP python3-aiosmtpd (Debian package) not installed"
	exit 0
fi
why=$(pw_missing)
if [ -n "$why" ]; then
	echo "1..0 # SKIP Patchwork cannot run here: $why"
	exit 0
fi

LOOP_NAMES=(bisect-1 bisect-2)
LOOP_GROUP=bisect
LOOP_TREE=bisect-tree
LOOP_TREE_FULL=never
LOOP_DEADLINE=10m
LOOP_POWER_TIMEOUT=1500
LOOP_POWER=ipmi
LOOP_CONSOLE=ser2net
LOOP_RERUNS=1
LOOP_RERUN_BUDGET=1000%
LOOP_SCHEDULE_EXTRA="bisect-steps = 4"
author="Ann Developer <ann@bootci.test>"
panicked=igt@igt_kernel@panic
flaky=igt@igt_basic@flaky
title_a="drm/lab: a series whose fifth patch panics the kernel"
title_b="drm/lab: a series of harmless text"
bad_subject="drm/lab: fast.testlist: run igt_kernel@panic"
series_a=pw-$LIST_PROJECT-1
series_b=pw-$LIST_PROJECT-2
started=$SECONDS

# The build command's inputs (tests/lab/build-series; `make demo` sets them from the Makefile):
# the builder, the kernel, and what the tree's recipe and its spec name (initramfs/build.mk's
# IMAGE_ENV: images/test-image.conf's and initramfs/test.spec's ${VAR}s).
export BOOTCI_BUILDER=${BOOTCI_BUILDER:-$BUILD/host/bin/bootci-builder}
export BOOTCI_KERNEL=${BOOTCI_KERNEL:-$BUILD/kernel}
export EXECUTOR=${EXECUTOR:-$BUILD/musl/bin/bootci-executor}
export BUSYBOX=${BUSYBOX:-/bin/busybox}
export EXECUTOR_CONF=${EXECUTOR_CONF:-$SRC/initramfs/executor.conf}
export FIXTURES=${FIXTURES:-$BUILD/musl/bin/fixtures}
export BOOTCI_EFI=${BOOTCI_EFI:-$BUILD/musl/bin/bootci-efi}

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
trap 'loop_stop; list_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_tier BUILD TIER TIMEOUT: loop_wait_tier, its progress as TAP comments
wait_tier() {
	loop_wait_tier "$@" 2>&1 | diag
	return "${PIPESTATUS[0]}"
}

# wait_log SECONDS REGEX: the first master.log line matching REGEX (its "patchwork PROJECT: "
# prefix dropped) once there, as a TAP comment too; 1 and a comment naming REGEX when none came
wait_log() {
	local until=$((SECONDS + $1)) line
	while :; do
		if line=$(grep -a -m 1 -E "$2" "$LOOP_WORK/master.log"); then
			echo "master: ${line#patchwork "$LIST_PROJECT": }" | diag >&2
			echo "${line#patchwork "$LIST_PROJECT": }"
			return 0
		fi
		[ $SECONDS -lt "$until" ] || break
		sleep 2
	done
	echo "no line of the master's log matched in $1 s: $2" | diag >&2
	return 1
}

# pw_log: the master's Patchwork lines, prefix dropped
pw_log() {
	sed -n "s/^patchwork $LIST_PROJECT: //p" "$LOOP_WORK/master.log"
}

# message_id FILE: the Message-ID of a mail git format-patch wrote
message_id() {
	sed -n 's/^Message-I[dD]: *//p' "$1" | head -n 1
}

# commit_text FILE TEXT SUBJECT: TEXT appended to FILE in the tree, committed by the author
commit_text() {
	printf '%s\n' "$2" >>"$LIST_TREE/$1"
	git -C "$LIST_TREE" add "$1"
	git -C "$LIST_TREE" commit -q --author="$author" -m "$3"
}

# reply_new_issues BUILD: "TEST MACHINE" per possible new issue of the master's report, sorted
reply_new_issues() {
	"$AGGREGATOR" report --build "$1" --data "$LOOP_DATA" --mbox "$LOOP_WORK/$1.mbox" \
		--date 2000000000 >/dev/null 2>&1 || { echo "no report of $1" | diag >&2; return 1; }
	python3 - "$LOOP_WORK/$1.mbox" <<'PY'
import email, re, sys
data = open(sys.argv[1], "rb").read()
body = email.message_from_bytes(data[data.index(b"\n") + 1:]).get_payload(decode=True).decode()
section = re.search(r"^== Possible new issues ==\n(.*?)(?=^== |\Z)", body, re.S | re.M)
for test, lines in re.findall(r"^  \* (\S+):\n((?:    .*\n)+)", section.group(1) if section else "", re.M):
    for machines in re.findall(r"^    - ([^:]+):", lines, re.M):
        for machine in machines.split(", "):
            print(test, machine)
PY
}

# received_about MESSAGE_ID SUBJECT_REGEX: the received mails threaded on MESSAGE_ID (In-Reply-To)
# whose subject matches SUBJECT_REGEX, one path a line
received_about() {
	local f
	for f in $(list_received); do
		python3 - "$f" "$1" "$2" <<'PY' && echo "$f"
import email, email.policy, re, sys
# The default policy decodes the Subject's RFC 2047 words, as a mail reader shows it.
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
subject = " ".join(str(m.get("Subject", "")).split())
sys.exit(0 if (m.get("In-Reply-To") or "").strip() == sys.argv[2] and re.search(sys.argv[3], subject) else 1)
PY
	done
}

# wait_received SECONDS MESSAGE_ID SUBJECT_REGEX: received_about, once it names a mail
wait_received() {
	local until=$((SECONDS + $1)) got
	while :; do
		got=$(received_about "$2" "$3")
		[ -z "$got" ] || { echo "$got"; return 0; }
		[ $SECONDS -lt "$until" ] || break
		sleep 2
	done
	echo "the SMTP server received no mail In-Reply-To $2 whose subject matches '$3' in $1 s" \
		"($(list_received | wc -l) received in all)" | diag >&2
	return 1
}

# mail_series TITLE: list_mail_series from the author, its output to the TAP log
mail_series() {
	list_mail_series "$1" "$author" >"$LOOP_WORK/mail-series.log" 2>&1
	local status=$?
	diag <"$LOOP_WORK/mail-series.log"
	return $status
}

# steps_of BUILD: the master's step lines of BUILD's bisect, "S K VERDICT" each
steps_of() {
	pw_log | sed -n -E "s/^bisect $1: step ([0-9]+): patch ([0-9]+) of [0-9]+ \\([^)]*\\): (good|bad|skipped|flaky):.*/\\1 \\2 \\3/p"
}

# ---- the list, the master, the machines, the tree's build ----
plan 25
# list_up: the list started and the tree made (in this shell: they set variables)
list_up() {
	list_start >"$LOOP_WORK/list-start.log" 2>&1 || { diag <"$LOOP_WORK/list-start.log"; return 1; }
	list_tree
}
check "Patchwork and the SMTP server started, the lab's kernel tree made" list_up || exit 1
LOOP_PORT=$(master_free_port)
mkdir -p "$LOOP_WORK/master"
cat >"$LOOP_WORK/master/patchwork.conf" <<CONF
# written by tests/lab/bisect.t: bootci-patchwork.conf(5)
[project $LIST_PROJECT]
url = $LIST_PW_URL
project = $LIST_PROJECT
token-file = $LIST_PW_TOKEN
poll = 3s
serve-url = http://127.0.0.1:$LOOP_PORT
build-command = $SRC/tests/lab/build-series
base = $LIST_TREE
branch = master
tree = $LOOP_TREE
build-timeout = 10m
CONF
cat >"$LOOP_WORK/master/mail.conf" <<CONF
# written by tests/lab/bisect.t: bootci-mail.conf(5)
url = $LIST_SMTP_URL/lab.example
from = bootci <ci@lab.example>
to = demo list <$LIST_ADDRESS>
interval = 2s
reply = final
matrix-url = http://127.0.0.1:$LOOP_PORT
CONF
check "the master started following the list, bisect-steps = 4 in its inventory" \
	eval 'loop_master_start && grep -x "bisect-steps = 4" "$LOOP_DATA/machines.conf" >/dev/null' || exit 1
loop_publish_known_good kg-1 "$known_good" "$BUILD/images/known-good.manifest" 2>&1 | diag
check "both machines' disks written from the master's kg-1, entry made, enrolled" \
	loop_machines_prepare kg-1 || exit 1
check "both machines powered on by the master through their BMCs" loop_power_on || exit 1
commit=$(git -C "$LIST_TREE" rev-parse HEAD)
loop_publish base-1 "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LIST_TREE/fast.testlist" \
	"$LIST_TREE/full.testlist" --commit "$commit" --tier fast 2>&1 | diag

# ---- A: 8 patches, the fifth panics the kernel (mailed while base-1's fast tier runs) ----
git -C "$LIST_TREE" checkout -q -b series-a master
commit_text NOTES "The lab's kernel tree: a test image's recipe and its two testlists." \
	"drm/lab: NOTES: say what the tree holds"
commit_text fast.testlist "# Every machine of the shard group runs this tier whole." \
	"drm/lab: fast.testlist: say who runs it"
commit_text full.testlist "# Split across the shard group once the fast tier passed." \
	"drm/lab: full.testlist: say how it is split"
commit_text test-image.conf "# (built by tests/lab/build-series for each series of the list)" \
	"drm/lab: test-image.conf: say who builds it"
commit_text fast.testlist "$panicked" "$bad_subject"
commit_text NOTES "Its series come from the list's Patchwork." "drm/lab: NOTES: say where series come from"
commit_text full.testlist "# Its suspend cycles come first." "drm/lab: full.testlist: say what comes first"
commit_text NOTES "The master bisects a regressed series by itself." "drm/lab: NOTES: say who bisects"
check "series A, 8 patches, mailed to the list and taken by Patchwork" mail_series "$title_a"
git -C "$LIST_TREE" log --reverse --format='mailed: %s' master..series-a | diag
series_a_id=$(message_id "$LIST_DIR"/outgoing/0000-cover-letter.patch)
bad_id=$(message_id "$LIST_DIR"/outgoing/0005-*.patch)
echo "series A's Message-ID $series_a_id, patch 5's $bad_id" | diag
check "the master picked series A up, built and published it as $series_a" \
	eval 'wait_log 60 "^patchwork $LIST_PROJECT: series 1 .*picked up: build $series_a" >/dev/null &&
		built=$(wait_log 600 "^patchwork $LIST_PROJECT: series 1: (built and published|does not)") &&
		[[ "$built" == "series 1: built and published as $series_a "* ]]'
check "the tree's build base-1 published, its fast tier done on both machines" \
	wait_tier base-1 fast 900 || exit 1
loop_wait_gate base-1 60 2>&1 | diag
check "$series_a's fast tier done on both machines despite the panics" wait_tier "$series_a" fast 900
loop_jobs "$series_a" | diag
new=$(reply_new_issues "$series_a" | tr '\n' ' ')
echo "$series_a's possible new issues: $new" | diag
check "its possible new issues are $panicked on both machines" \
	[ "$new" = "$panicked bisect-1 $panicked bisect-2 " ]
check "the master's reply to series A names $panicked" eval '
	reply=$(wait_received 900 "$series_a_id" "^(?!bootci bisect: )") &&
		grep -a -l -F "$panicked" $reply >/dev/null'

# ---- A: the master bisects it by itself ----
check "the master started bisecting $series_a: 8 patches, the test $panicked" \
	eval 'wait_log 300 "^patchwork $LIST_PROJECT: bisect $series_a: started: " |
		grep -x -F "bisect $series_a: started: 8 patches, 1 test(s): $panicked" >/dev/null'
# B's tree build meanwhile: master's next commit on a branch of its own (the candidates are
# built from master), published once the bisect's first booting step is queued
git -C "$LIST_TREE" checkout -q -b next master
commit_text fast.testlist "$flaky" "drm/lab: fast.testlist: run igt_basic@flaky"
commit=$(git -C "$LIST_TREE" rev-parse HEAD)
wait_log 900 "^patchwork $LIST_PROJECT: bisect $series_a: (step [0-9]+: .* run\(s\) queued|first bad patch|not reproduced|inconclusive)" >/dev/null
loop_publish base-2 "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LIST_TREE/fast.testlist" \
	"$LIST_TREE/full.testlist" --commit "$commit" --tier fast 2>&1 | diag
verdict=$(wait_log 1200 "^patchwork $LIST_PROJECT: bisect $series_a: (first bad patch|not reproduced|inconclusive)")
check "its verdict: first bad patch 5 of 8, its subject and Message-ID" \
	eval '[[ "$verdict" == "bisect $series_a: first bad patch 5 of 8: "*"$bad_subject"*" $bad_id" ]]'
steps=$(steps_of "$series_a")
# shellcheck disable=SC2086 # a word a field
printf 'step %s: patch %s: %s\n' $steps | diag
check "in at most 4 steps, numbered in order, below patch 5 good and from patch 5 bad" eval '
	n=$(printf "%s\n" "$steps" | grep -c .) && [ "$n" -ge 1 ] && [ "$n" -le 4 ] &&
	printf "%s\n" "$steps" | awk "\$1 != NR { exit 1 } (\$2 < 5) != (\$3 == \"good\") { exit 1 }"'
# step_builds: every step's candidate has its build log (DATA/series/PROJECT/1/bisect/K/build.log)
step_builds() {
	local k
	[ -n "$steps" ] || return 1
	for k in $(printf '%s\n' "$steps" | cut -d' ' -f2); do
		[ -s "$LOOP_DATA/series/$LIST_PROJECT/1/bisect/$k/build.log" ] ||
			{ echo "no build.log of patch $k's candidate" | diag; return 1; }
	done
}
check "every step built its candidate with the build command (DATA/series/$LIST_PROJECT/1/bisect/K/build.log)" \
	step_builds
# The run id of a step's job starts with its candidate's build name, pw-demo-1-kK.
booted=$(grep -a -o -E "boot: [^:]+: $series_a-k[0-9]+" "$LOOP_WORK/master.log" | sort -u | tr '\n' ' ')
echo "the candidates' boots: ${booted:-none}" | diag
check "no candidate below patch 5 booted a machine (none of them lists the test)" \
	eval '[ -n "$steps" ] && ! grep -a -q -E "boot: [^:]+: $series_a-k[1-4]([^0-9]|\$)" "$LOOP_WORK/master.log"'
show=$("$AGGREGATOR" bisect show "$series_a" --data "$LOOP_DATA" 2>&1)
printf '%s\n' "$show" | head -n 12 | diag
check "\`bisect show $series_a\` says done: first bad patch 5 of 8, then its steps" eval '
	[[ "$(head -n 1 <<<"$show")" == "bisect $series_a: done: first bad patch 5 of 8: "*"$bad_subject"*" $bad_id" ]] &&
	[ "$(sed -n -E "s/^step ([0-9]+): patch ([0-9]+) of 8 \\([^)]*\\): (good|bad|skipped|flaky): .*/\\1 \\2 \\3/p" <<<"$show")" = "$steps" ]'
checks=$(list_checks 1 2>&1)
printf '%s\n' "$checks" | diag
check "Patchwork: bootci-bisect fail on patch 5 alone, first bad patch, linking the bisect page" \
	python3 -c '
import re, sys
subject, url = sys.argv[1], sys.argv[2]
patch, fails = None, []
for line in sys.stdin.read().splitlines():
    if not line.startswith("    "):
        patch = line
    elif line.startswith("    bootci-bisect fail: "):
        fails.append((patch, line))
ok = len(fails) == 1 and fails[0][0].endswith(subject) and \
    fails[0][1].startswith("    bootci-bisect fail: first bad patch") and fails[0][1].endswith("<%s>" % url)
sys.exit(0 if ok else "bootci-bisect fail checks: %r" % fails)' "$bad_subject" "$LOOP_MASTER/bisects/$series_a" <<<"$checks"
follow=$(wait_received 120 "$series_a_id" "^bootci bisect: first bad patch of ")
check "the follow-up mail: threaded on series A, to the list and the author, naming patch 5" \
	python3 -c '
import email, email.policy, email.utils, sys
path, title, subject, mid, lst, author = sys.argv[1:7]
if not path or "\n" in path:
    sys.exit("not one follow-up mail: %r" % path)
# The default policy decodes the RFC 2047 words of the subject, as a mail reader shows them.
m = email.message_from_binary_file(open(path, "rb"), policy=email.policy.default)
got = " ".join(str(m["Subject"]).split())
if got != "bootci bisect: first bad patch of " + title:
    sys.exit("its subject: %s" % got)
to = {a for _, a in email.utils.getaddresses(m.get_all("To", []) + m.get_all("Cc", []))}
if not {lst, email.utils.parseaddr(author)[1]} <= to:
    sys.exit("it went to %s" % sorted(to))
body = m.get_payload(decode=True).decode()
for want in (subject, mid, email.utils.parseaddr(author)[0]):
    if want not in body:
        sys.exit("its body does not name %s:\n%s" % (want, body))' \
	"$follow" "$title_a" "$bad_subject" "$bad_id" "$LIST_ADDRESS" "$author"
page=$(curl -sS --max-time 10 "$LOOP_MASTER/bisects/$series_a" 2>&1)
check "serve's /bisects/$series_a names patch 5: its subject and Message-ID" eval '
	grep -q -F "first bad patch" <<<"$page" && grep -q -F "$bad_subject" <<<"$page" && { grep -q -F "${bad_id//[<>]/}" <<<"$page"; } ||
		{ printf "%s\n" "$page" | head -n 20 | diag; false; }'

# ---- B: the tree runs a flaky test; a series of harmless text ----
# reruns = 2 from here on: written whole, then renamed, so the master never reads half of it
sed 's/^reruns = 1$/reruns = 2/' "$LOOP_DATA/machines.conf" >"$LOOP_DATA/machines.conf.new" &&
	mv "$LOOP_DATA/machines.conf.new" "$LOOP_DATA/machines.conf"
check "the master re-read its inventory: reruns = 2 for series B" eval '
	grep -x "reruns = 2" "$LOOP_DATA/machines.conf" >/dev/null &&
	wait_log 60 "^schedule: inventory: 2 machine\(s\) from " >/dev/null'
git -C "$LIST_TREE" checkout -q master
git -C "$LIST_TREE" merge -q --ff-only next
git -C "$LIST_TREE" checkout -q -b series-b master
commit_text NOTES "A note of series B." "drm/lab: NOTES: start them"
commit_text fast.testlist "# The flaky fixture fails one run in three." "drm/lab: fast.testlist: say what is flaky"
commit_text NOTES "Another note of series B." "drm/lab: NOTES: say more"
check "series B, 3 harmless patches, mailed, built and published as $series_b" eval '
	mail_series "$title_b" &&
	built=$(wait_log 600 "^patchwork $LIST_PROJECT: series 2: (built and published|does not)") &&
	[[ "$built" == "series 2: built and published as $series_b "* ]]'
series_b_id=$(message_id "$LIST_DIR"/outgoing/0000-cover-letter.patch)
check "the tree's build base-2, running $flaky, done on both machines" wait_tier base-2 fast 900
check "$series_b's fast tier done on both machines" wait_tier "$series_b" fast 900
loop_wait_gate "$series_b" 600 2>&1 | diag
wait_received 300 "$series_b_id" "^(?!bootci bisect: )" >/dev/null
for b in base-2 "$series_b"; do
	"$AGGREGATOR" schedule --data "$LOOP_DATA" jobs "$b" | diag
done
new=$(reply_new_issues "$series_b" | tr '\n' ' ')
echo "$series_b's possible new issues after its reruns: ${new:-none}" | diag
# The master's first word on B's bisection: started, or why not (it says one or the other once
# B's fast tier and its reruns have ended and the gate decided).
bisected_b=
outcome=$(wait_log 120 "^patchwork $LIST_PROJECT: bisect $series_b: ")
if [[ "$outcome" == "bisect $series_b: started: "* ]]; then
	bisected_b=yes
	outcome=$(wait_log 1200 "^patchwork $LIST_PROJECT: bisect $series_b: (first bad patch|not reproduced|inconclusive)")
	echo "series B: a bisect started and ended: ${outcome:-(no end in time)}" | diag
else
	echo "series B: no bisect started${new:+ (possible new issues: $new)}" | diag
fi
grep -a -F "$series_b" "$LOOP_WORK/master.log" | grep -a -v -E "^(serve|publish|power):" | tail -n 20 | diag
check "series B: no first bad patch named, whatever the dice said" eval '
	! pw_log | grep -q "^bisect $series_b: first bad patch" &&
	! list_checks 2 | grep -q "^    bootci-bisect fail" &&
	[ -z "$(received_about "$series_b_id" "^bootci bisect: first bad patch")" ] &&
	{ [ -z "$bisected_b" ] || grep -q -E "^bisect $series_b: (not reproduced|inconclusive):" <<<"$outcome"; }'

# ---- the end ----
loop_stop
list_stop
left=$(loop_leftovers; list_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU, BMC, ser2net, serve, Patchwork or SMTP server left behind" [ -z "$left" ]
echo "bisect.t: $((SECONDS - started)) s in all" | diag

#!/usr/bin/env bash
# `bootci-aggregator build`, `machine` and `report` end to end: builds
# registered, runs generated in igt_runner's layout (report-runs.py) and
# ingested for real, known-issue filters in the data folder (one on a tag and
# status, one on a dmesg regex read back from the kept archive), and the
# reply read by two independent parsers: Python's email package (through
# mailbox.mbox) and git mailinfo. --send goes through a sendmail found in
# PATH that keeps what it was given.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

aggregator=$BUILD/host/bin/bootci-aggregator
gen=$SRC/tests/aggregator/report-runs.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$work/data
export BOOTCI_DATA=$data
plan 40

agg() { "$aggregator" "$@" >>"$work/log" 2>&1; }

"$aggregator" build add drm-tip-1 --tree drm-tip --commit aaa >"$work/usage.out" 2>&1
check "build add without --tier: exit 2" test $? = 2
"$aggregator" build add drm-tip-1 --tree drm-tip --commit aaa --tier medium >"$work/tier.out" 2>&1
status=$?
check "build add with tier 'medium': refused (exit 1)" test "$status" = 1
"$aggregator" build add drm/tip --tree drm-tip --commit aaa --tier fast >"$work/name.out" 2>&1
status=$?
check "build add of a name holding '/': refused (exit 2)" test "$status" = 2
check "... saying it is not a build name" grep -q "'drm/tip' is not a build name" "$work/name.out"

title='drm/i915: fix the flip — v2 ✓'
for i in 1 2 3; do
	agg build add "drm-tip-$i" --tree drm-tip --commit "c0ffee$i" --tier full --registered "100$i"
done
agg build add series-1 --tree patchwork --commit beef1 --tier fast --base drm-tip-3 \
	--series-title "$title" --message-id '<cover.1@lists.example>' --registered 2000
check "builds registered (exit 0)" test $? = 0
"$aggregator" build show series-1 >"$work/show.out" 2>&1
check "build show gives the series' base and Message-ID" \
	grep -qx 'message-id <cover.1@lists.example>' "$work/show.out"
check "... and its base" grep -qx 'base drm-tip-3' "$work/show.out"
agg machine tag lab-1 tgl shard-a
check "machine tag: exit 0" test $? = 0
"$aggregator" machine tags lab-1 >"$work/tags.out" 2>&1
check "machine tags lists both" test "$(tr '\n' ' ' <"$work/tags.out")" = "shard-a tgl "
# lab-1 and lab-2 are duplicates: one shard group, whose runs the baseline counts together.
agg machine group lab-1 shard-a
agg machine group lab-2 shard-a
check "machine group: lab-1 is in shard-a" test "$("$aggregator" machine group lab-1 2>&1)" = shard-a

# Three drm-tip runs per machine: gem@flaky failed once on each (drm-tip-2), gem@dup-flake
# once on lab-2 only (drm-tip-1): flaky on lab-1 too, through its shard group.
for m in lab-1 lab-2; do
	for i in 1 2 3; do
		flaky=pass dup_flake=pass
		[ "$i" = 2 ] && flaky=fail
		[ "$i" = 1 ] && [ "$m" = lab-2 ] && dup_flake=fail
		"$gen" "$work/runs/$m-tip-$i" kms_flip@basic=pass gem@flaky=$flaky gem@fixed=fail \
			gem_exec_whisper@a=pass gem_exec_whisper@b=pass gem_exec_whisper@c=pass gem@hang=pass \
			gem@dup-flake=$dup_flake
		agg ingest --machine "$m" --build "drm-tip-$i" "$work/runs/$m-tip-$i"
	done
	"$gen" "$work/runs/$m-series" kms_flip@basic=dmesg-warn gem@flaky=fail gem@fixed=pass \
		gem_exec_whisper@a=dmesg-warn gem_exec_whisper@b=dmesg-warn gem_exec_whisper@c=dmesg-warn \
		'gem@hang=pass:i915 0000:00:02.0: GPU HANG: ecode 9:0:0x00000000' gem@dup-flake=fail
	agg ingest --machine "$m" --build series-1 "$work/runs/$m-series"
done
check "eight generated runs ingested" \
	test "$(sqlite3 "$data/bootci.sqlite" 'SELECT COUNT(*) FROM runs')" = 8

cat >"$data/known-issues.txt" <<'KNOWN'
bootci-known-issues 1
# whisper warns on Tiger Lake
filter https://bugs.example/118
  test ^igt@gem_exec_whisper@
  tags tgl
  statuses dmesg-warn
filter https://bugs.example/200
  dmesg GPU HANG: ecode [0-9]+
KNOWN

"$aggregator" report --build series-1 --mbox "$work/reply.mbox" --to 'intel-gfx <gfx@lists.example>' \
	--from 'bootci <ci@lab.example>' --url https://ci.example/ --fold 2 --date 1764763200 \
	>"$work/report.out" 2>&1
status=$?
check "report --mbox: exit 0" test "$status" = 0
check "it sums up: 5 possible new issues, 5 known, 4 flaky, 2 fixed" \
	grep -q 'FAILURE: 5 possible new issues, 5 known, 4 flaky, 2 fixed' "$work/report.out"

# Python's email package, as a mail client reads it.
python3 - "$work/reply.mbox" "$title" >"$work/python.out" 2>&1 <<'PY'
import email.policy, email.utils, mailbox, sys
import email
box = mailbox.mbox(sys.argv[1], create=False,
                   factory=lambda f: email.message_from_binary_file(f, policy=email.policy.default))
messages = list(box)
assert len(messages) == 1, len(messages)
msg = messages[0]
raw = open(sys.argv[1], "rb").read()
problems = []
def want(cond, what):
    if not cond:
        problems.append(what)
want(str(msg["Subject"]) == "✗ Fi.CI.FAST: failure for " + sys.argv[2], "subject %r" % str(msg["Subject"]))
want(msg["In-Reply-To"] == "<cover.1@lists.example>", "in-reply-to %r" % msg["In-Reply-To"])
want(msg["References"] == "<cover.1@lists.example>", "references %r" % msg["References"])
want(str(msg["Message-ID"]).startswith("<bootci.series-1.") and str(msg["Message-ID"]).endswith("@lab.example>"), "message-id %r" % msg["Message-ID"])
want(email.utils.parsedate_to_datetime(str(msg["Date"])).timestamp() == 1764763200, "date %r" % msg["Date"])
want(msg["MIME-Version"] == "1.0", "mime-version")
want(msg.get_content_type() == "text/plain" and msg.get_content_charset() == "utf-8", "content-type")
want(msg["Content-Transfer-Encoding"] == "8bit", "cte")
want(msg["To"].addresses[0].addr_spec == "gfx@lists.example", "to")
want(not msg.defects and all(not p.defects for p in msg.walk()), "defects %r" % msg.defects)
for line in raw.split(b"\n"):
    want(len(line) <= 998, "a line of %d octets" % len(line))
body = msg.get_content()
new, known = body.find("== Possible new issues =="), body.find("== Known issues ==")
want(0 <= new < known, "sections out of order")
new_part = body[new:known]
# CI Bug Log's form: a test once, its machines with the same transition on one line, each
# line followed by its link to serve's pages (the matrix's row for several machines, the
# result's page for one); the three whisper subtests with the same change folded (--fold 2).
want("  * igt@kms_flip@basic:\n    - lab-1, lab-2: [PASS] -> [DMESG-WARN]\n"
     "      https://ci.example/builds/series-1?test=%5Eigt@kms_flip@basic%24\n" in new_part, "kms_flip on both")
want("  * igt@gem_exec_whisper@* (3 subtests):\n    - lab-2: [PASS] -> [DMESG-WARN]\n"
     "      https://ci.example/builds/series-1?test=%5Eigt@gem_exec_whisper@&status=changed\n" in new_part,
     "whisper folded on lab-2")
want("igt@gem_exec_whisper@b" not in body, "folded tests listed")
want("  * igt@gem_exec_whisper@* (3 subtests):\n    - lab-1: [PASS] -> [DMESG-WARN] (https://bugs.example/118)\n" in body[known:], "known whisper on lab-1")
want("  * igt@gem@hang:\n    - lab-1, lab-2: [PASS] -> [DMESG-WARN] (https://bugs.example/200)\n" in body[known:], "dmesg filter")
want("igt@gem@hang" not in new_part, "known hang listed as new")
flaky = body.find("== Flaky tests ==")
want(flaky > known and "igt@gem@flaky" in body[flaky:] and "igt@gem@flaky" not in new_part, "flaky")
# A flake is flaky with its failures over the shard group's baseline (3 runs on each machine).
want("  * igt@gem@flaky:\n    - lab-1, lab-2: [PASS] -> [FAIL] (flaky: failed 2 of 6 runs on shard-a)\n"
     in body[flaky:], "flaky's rate")
want("  * igt@gem@dup-flake:\n    - lab-1, lab-2: [PASS] -> [FAIL] (flaky: failed 1 of 6 runs on shard-a)\n"
     in body[flaky:] and "igt@gem@dup-flake" not in new_part, "a flake seen only on lab-2 is flaky on lab-1")
fixed = body.find("== Fixed tests ==")
want(fixed > 0 and "  * igt@gem@fixed:\n    - lab-1, lab-2: [FAIL] -> [PASS]\n" in body[fixed:], "fixed")
want("Test matrix: https://ci.example/builds/series-1\n" in body, "matrix link")
# No test twice in a section.
import re
for section in re.split(r"^== ", body, flags=re.M):
    items = re.findall(r"^  \* (\S+):$", section, re.M)
    want(len(items) == len(set(items)), "a test listed twice: %r" % items)
print("\n".join(problems) if problems else "ok")
sys.exit(1 if problems else 0)
PY
python_status=$?
check "Python's email package reads it as the reply it should be" test "$python_status" = 0
[ "$python_status" = 0 ] || diag <"$work/python.out"

# git mailinfo: how a maintainer's tools take a mail apart.
sed 1d "$work/reply.mbox" | (cd "$work" && git mailinfo msg patch) >"$work/info" 2>"$work/mailinfo.err"
status=$?
check "git mailinfo takes it (exit 0)" test "$status" = 0
check "git mailinfo decodes the subject" \
	grep -qxF "Subject: ✗ Fi.CI.FAST: failure for $title" "$work/info"
check "git mailinfo finds the sender" grep -qx 'Email: ci@lab.example' "$work/info"
check "git mailinfo gets the body, new issues first" \
	test "$(grep -n '^== ' "$work/msg" | sed -n 3p)" = "$(grep -n '^== Possible new issues ==$' "$work/msg")"

# --send: through the sendmail in PATH.
mkdir "$work/bin"
cat >"$work/bin/sendmail" <<SH
#!/bin/sh
printf '%s\n' "\$*" >"$work/sendmail.args"
cat >"$work/sendmail.in"
SH
chmod +x "$work/bin/sendmail"
mkdir "$work/tmp"
TMPDIR=$work/tmp PATH=$work/bin:$PATH "$aggregator" report --build series-1 --send --to gfx@lists.example \
	--from 'bootci <ci@lab.example>' --url https://ci.example --date 1764763200 >"$work/send.out" 2>&1
status=$?
check "report --send: exit 0" test "$status" = 0
check "sendmail ran with -t" test "$(cat "$work/sendmail.args" 2>/dev/null)" = "-t"
check "... and was given the message" grep -q '^In-Reply-To: <cover.1@lists.example>$' "$work/sendmail.in"
check "... starting with its headers, without the mbox's From_ line" \
	test "$(head -c 6 "$work/sendmail.in")" = "From: " -a -z "$(grep '^From ' "$work/sendmail.in")"
check "... leaving no temporary behind in TMPDIR" test -z "$(find "$work/tmp" -mindepth 1)"
PATH=/usr/bin:/bin "$aggregator" report --build series-1 --send --to gfx@lists.example >"$work/nosendmail.out" 2>&1
status=$?
if command -v sendmail >/dev/null 2>&1 && [ "$(command -v sendmail)" != "$work/bin/sendmail" ]; then
	skip "a sendmail is installed on this machine: not testing its absence"
else
	check "no sendmail: exit 1 saying so" test "$status" = 1 -a -n "$(grep 'sendmail -t: not found' "$work/nosendmail.out")"
fi
"$aggregator" report --build series-1 --send >"$work/noto.out" 2>&1
check "--send without --to: exit 2" test $? = 2

# A series with nothing new: success, full tier.
agg build add series-2 --tree patchwork --commit beef2 --tier full --base drm-tip-3 \
	--series-title 'drm/i915: a quiet one' --message-id cover.2@lists.example --registered 2001
"$gen" "$work/runs/lab-1-series-2" kms_flip@basic=pass gem@fixed=pass
agg ingest --machine lab-1 --build series-2 "$work/runs/lab-1-series-2"
"$aggregator" report --build series-2 --mbox "$work/quiet.mbox" --date 1764763200 >"$work/quiet.out" 2>&1
check "a quiet series: exit 0" test $? = 0
check "... success in its subject" test "$(python3 -c 'import email,email.policy,sys; m=email.message_from_binary_file(open(sys.argv[1],"rb"),policy=email.policy.default); print(m["Subject"])' <(sed 1d "$work/quiet.mbox"))" = "✓ Fi.CI.FULL: success for drm/i915: a quiet one"
check "... no new issues section" test -z "$(grep 'Possible new issues ==' "$work/quiet.mbox")"

# Refusals.
printf 'bootci-known-issues 1\nfilter https://b/1\ncolour red\n' >"$work/bad-filters.txt"
"$aggregator" report --build series-1 --filters "$work/bad-filters.txt" >"$work/bad.out" 2>&1
status=$?
check "a bad filter file: exit 1 naming its line" \
	test "$status" = 1 -a -n "$(grep "bad-filters.txt:3: unknown key 'colour'" "$work/bad.out")"
"$aggregator" report --build nope >"$work/nope.out" 2>&1
status=$?
check "an unknown build: exit 1 naming it" test "$status" = 1 -a -n "$(grep "no build named 'nope'" "$work/nope.out")"
"$aggregator" report --build series-1 --mbox "$work/missing/dir/x.mbox" >"$work/nodir.out" 2>&1
status=$?
check "an mbox in a missing folder: exit 1, nothing written" test "$status" = 1 -a ! -e "$work/missing"

# The matrix: a test whose output tries to end the <pre> and run a script.
agg build add series-3 --tree patchwork --commit beef3 --tier fast --base drm-tip-3 --registered 2002
"$gen" "$work/runs/lab-1-series-3" kms_flip@basic=fail gem@fixed=pass
printf '<script>alert(1)</script>\n</pre><img src=x onerror=alert(2)>\n\001 \377 & done\n' \
	>>"$work/runs/lab-1-series-3/0/out.txt"
agg ingest --machine lab-1 --build series-3 "$work/runs/lab-1-series-3"
"$aggregator" report --build series-3 --html "$work/html" >"$work/html.out" 2>&1
check "report --html: exit 0" test $? = 0
python3 - "$work/html/series-3" >"$work/html.check" 2>&1 <<'PY'
import html.parser, os, sys
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.pre, self.in_pre, self.cells = [], [], False, []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "pre":
            self.in_pre = True
            self.pre.append("")
        if tag == "td":
            self.cells.append(dict(attrs))
    def handle_endtag(self, tag):
        if tag == "pre":
            self.in_pre = False
    def handle_data(self, data):
        if self.in_pre:
            self.pre[-1] += data
def parse(path):
    p = Page()
    p.feed(open(path, encoding="utf-8").read())
    return p
problems = []
index = parse(os.path.join(sys.argv[1], "index.html"))
marked = [c for c in index.cells if "new" in c.get("class", "").split()]
if len(marked) != 1 or "fail" not in marked[0]["class"].split() or marked[0].get("title") != "PASS -> FAIL: possible new issue":
    problems.append("matrix cells %r" % index.cells)
page = parse(os.path.join(sys.argv[1], "lab-1", "1.html"))
if "script" in page.tags or "img" in page.tags:
    problems.append("the output made tags: %r" % page.tags)
out = page.pre[0] if page.pre else ""
if "<script>alert(1)</script>\n</pre><img src=x onerror=alert(2)>\n\u2401 \u00ff & done" not in out:
    problems.append("out shown as %r" % out)
print("\n".join(problems) or "ok")
sys.exit(1 if problems else 0)
PY
html_status=$?
check "the matrix marks the new failure; the result page shows the hostile output as text" test "$html_status" = 0
[ "$html_status" = 0 ] || diag <"$work/html.check"
check "... no raw '<script' in the result pages" test -z "$(grep -rl '<script' "$work/html/series-3/lab-1")"
check "... the matrix's only script is its filter's" test "$(grep -c '<script' "$work/html/series-3/index.html")" = 1
check "... the fixed test's page exists" test -f "$work/html/series-3/lab-1/0.html"

# With --results-url the cells link to serve's result pages and no page per result is written.
"$aggregator" report --build series-3 --html "$work/html-served" \
	--results-url 'http://master:8080' >"$work/served.out" 2>&1
check "report --html --results-url: exit 0" test $? = 0
check "... the page's links are relative to serve's address" \
	grep -q '^<base href="http://master:8080/">$' "$work/html-served/series-3/index.html"
check "... the cell links to serve's page of that result" \
	grep -q 'href="machines/lab-1/runs/lab-1-series-3/results/igt@kms_flip@basic"' \
	"$work/html-served/series-3/index.html"
check "... no page per result written, only the matrix" test "$(ls "$work/html-served/series-3")" = index.html

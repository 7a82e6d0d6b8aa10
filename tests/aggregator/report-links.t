#!/usr/bin/env bash
# Every link the reply (`report --url`), KCIDB (`export kcidb --url`, log_url)
# and JUnit (`export junit --url`, "result page:" in system-out) give opens
# one of serve's pages: a real serve on 127.0.0.1 answers each with 200, and
# a result's link opens that result's page (issue 33, point 5: the reply
# linked to BASE/BUILD/index.html, which serve answers 404). Test names with
# '+' and '%' (results the results generator finds incomplete, in KCIDB and
# JUnit) check the percent-encoding both ways.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

gen=$SRC/tests/aggregator/report-runs.py
export BOOTCI_DATA=$work/data
plan 12

agg() { "$aggregator" "$@" >>"$work/log" 2>&1; }

agg build add base-1 --tree drm-tip --commit aaa --tier full --registered 1000
agg build add 'series 1' --tree patchwork --commit bbb --tier fast --base base-1 \
	--series-title 'drm: links' --message-id '<cover.9@lists.example>' --registered 2000
for m in lab-1 lab-2; do
	"$gen" "$work/runs/$m-base" kms_flip@basic=pass kms@one=pass 'kms@a+b=pass' 'kms@50%=pass' \
		gem_exec@s1=pass gem_exec@s2=pass gem_exec@s3=pass gem_exec@s4=pass gem@fixed=fail
	agg ingest --machine "$m" --build base-1 "$work/runs/$m-base"
	one=pass
	[ "$m" = lab-1 ] && one=fail
	"$gen" "$work/runs/$m-series" kms_flip@basic=fail "kms@one=$one" 'kms@a+b=fail' 'kms@50%=dmesg-warn' \
		gem_exec@s1=fail gem_exec@s2=fail gem_exec@s3=fail gem_exec@s4=fail gem@fixed=pass
	agg ingest --machine "$m" --build 'series 1' "$work/runs/$m-series"
done
check "runs of a base and a series on two machines ingested" \
	test "$(sqlite3 "$work/data/bootci.sqlite" 'SELECT COUNT(*) FROM runs')" = 4

add_machine lab-1 token-1
start_server

"$aggregator" report --build 'series 1' --mbox "$work/reply.mbox" --url "$base/" \
	--date 1764763200 >>"$work/log" 2>&1
check "report --url: exit 0" test $? = 0
"$aggregator" export kcidb --build 'series 1' --url "$base" -o "$work/kcidb.json" >>"$work/log" 2>&1
check "export kcidb --url: exit 0" test $? = 0
"$aggregator" export junit --machine lab-1 --run-id lab-1-series --url "$base" \
	-o "$work/junit.xml" >>"$work/log" 2>&1
check "export junit --url: exit 0" test $? = 0

# The links each document carries, one per line: "KIND TEST URL" (TEST "-" when the link is
# not a result's).
python3 - "$work/reply.mbox" "$work/kcidb.json" "$work/junit.xml" "$base" >"$work/links" \
	2>"$work/links.err" <<'PY'
import json, re, sys, urllib.parse, xml.etree.ElementTree as ET
reply, kcidb, junit, base = sys.argv[1:]
out = []
def add(kind, url):
    m = re.match(re.escape(base) + r"/machines/[^/]+/runs/[^/]+/results/([^/?]+)$", url)
    out.append((kind, urllib.parse.unquote(m.group(1)) if m else "-", url))
body = open(reply, encoding="utf-8").read()
for url in re.findall(r"https?://\S+", body):
    add("reply", url)
# Each machine line of the reply is followed by its link, or is a folded item's last line.
lines = body.split("\n")
for i, line in enumerate(lines):
    if line.startswith("    - "):
        j = i + 1
        while lines[j].startswith("      ") and "://" not in lines[j]:
            j += 1
        if not lines[j].startswith("      http") and not lines[j].startswith("    - "):
            sys.exit("a machine line without its link: %r" % line)
tests = json.load(open(kcidb))["tests"]
if not tests or any("log_url" not in t for t in tests):
    sys.exit("a KCIDB test without log_url")
for t in tests:
    add("kcidb", t["log_url"])
cases = list(ET.parse(junit).getroot().iter("testcase"))
for case in cases:
    texts = [e.text or "" for e in case.findall("system-out")]
    found = [l[len("result page: "):] for t in texts for l in t.split("\n") if l.startswith("result page: ")]
    if len(found) != 1:
        sys.exit("testcase %s: %d result pages in its system-out" % (case.get("name"), len(found)))
    add("junit", found[0])
for kind, test, url in out:
    print(kind, test, url)
PY
status=$?
check "every machine line of the reply, KCIDB test and JUnit testcase carries a link" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/links.err"
check "... the reply links to the matrix, results and the matrix's rows" \
	test "$(grep -c '^reply - .*/builds/series%201' "$work/links")" -ge 4 -a \
	"$(grep -c '^reply igt@' "$work/links")" = 1
check "... KCIDB gives 18 results' pages, JUnit 9" \
	test "$(grep -c '^kcidb igt@' "$work/links")" = 18 -a "$(grep -c '^junit igt@' "$work/links")" = 9

bad=0
wrong=0
n=0
while read -r kind test url; do
	n=$((n + 1))
	code=$(curl -s -o "$work/page" -w '%{http_code}' "$url")
	if [ "$code" != 200 ]; then
		bad=$((bad + 1))
		echo "$kind $url: $code" >>"$work/bad"
	elif [ "$test" != - ] && ! grep -qF "$test" "$work/page"; then
		wrong=$((wrong + 1))
		echo "$kind $url: not $test's page" >>"$work/bad"
	fi
done <"$work/links"
check "serve answers each of the $n links with 200" test "$bad" = 0 -a "$n" -ge 33
check "... and a result's link opens that result's page (names with '+' and '%' too)" test "$wrong" = 0
[ ! -s "$work/bad" ] || diag <"$work/bad"
check "... among them kms@a+b's and kms@50%'s, kms@one's on lab-1 in the reply" \
	test -n "$(grep '^junit igt@kms@a+b .*/results/igt@kms@a%2Bb$' "$work/links")" -a \
	-n "$(grep '^kcidb igt@kms@50% .*/results/igt@kms@50%25$' "$work/links")" -a \
	-n "$(grep '^reply igt@kms@one .*/machines/lab-1/runs/lab-1-series/results/igt@kms@one$' "$work/links")"

# What the reply linked to before: serve has no such page.
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/series%201/index.html")
check "BASE/BUILD/index.html (the old link) is no page of serve's" test "$code" = 404

stop_server
check "serve stopped cleanly" test "$server_status" = 0

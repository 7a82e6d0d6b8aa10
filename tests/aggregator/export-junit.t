#!/usr/bin/env bash
# `bootci-aggregator export junit` in the form strict consumers take (issue 33,
# point 6): well-formed UTF-8 XML whatever bytes a test name holds (each byte
# that is not UTF-8 written as \xHH), valid against the Jenkins xUnit plugin's
# junit-10.xsd (xmllint --schema; the schema is not copied here: it is
# jenkinsci/xunit-plugin's
# src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd,
# kept as data in ../shared/schemas/ beside the tree, JUNIT_XSD=FILE for
# another copy), read as GitLab reads it (testsuites > testsuite > testcase,
# failure/error/skipped and their text), and failures that say why and carry
# the job's logs.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

aggregator=$BUILD/host/bin/bootci-aggregator
gen=$SRC/tests/aggregator/report-runs.py
xsd=${JUNIT_XSD:-$SRC/../shared/schemas/junit-10.xsd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BOOTCI_DATA=$work/data

# A run whose one test name holds bytes that are not UTF-8 (Latin-1 é, 0xFF, 0xFE) beside
# valid UTF-8 (é), and whose failing test printed IGT's assertion lines on stderr.
"$gen" "$work/run-1" kms@p=pass kms@f=fail kms@s=skip kms@d=dmesg-warn kms@i=incomplete kms@n=notrun gem@BADNAME=fail
python3 - "$work/run-1" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(root, name)
        data = open(path, "rb").read()
        if b"BADNAME" in data:
            open(path, "wb").write(data.replace(b"BADNAME", b"caf\xe9-\xff\xfe-ok\xc3\xa9"))
PY
printf '(kms:42) CRITICAL: Test assertion failure function run, file ../tests/kms.c:12:\n(kms:42) CRITICAL: Failed assertion: crtc->active == 1 & <ok>\n' >>"$work/run-1/1/err.txt"
"$aggregator" ingest --machine lab-1 "$work/run-1" >"$work/log" 2>&1
check "a run with a test name that is not UTF-8 is ingested" test $? = 0
"$aggregator" export junit --machine lab-1 --run-id run-1 -o "$work/junit.xml" >>"$work/log" 2>&1
check "export junit: exit 0" test $? = 0

if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$work/junit.xml" >"$work/wf.out" 2>&1 &&
	grep -q 'name="caf\\xE9-\\xFF\\xFE-oké"' "$work/junit.xml"; then
	ok "well-formed UTF-8 XML: the name's bytes that are not UTF-8 are written as \\xHH, its é kept"
else
	not_ok "the document is not well-formed, or the name is not escaped as said"
	diag <"$work/wf.out"
	grep -a caf "$work/junit.xml" | diag
fi

# With --url each testcase's system-out gives its result's page on serve.
"$aggregator" export junit --machine lab-1 --run-id run-1 --url http://master:8080/ \
	-o "$work/junit-url.xml" >>"$work/log" 2>&1

if ! command -v xmllint >/dev/null; then
	not_ok "xmllint is not installed (libxml2-utils: builder/setup/host-deps.sh)"
	not_ok "xmllint is not installed: the schema cannot refuse anything"
	not_ok "xmllint is not installed: the export with --url is not validated"
elif [ ! -f "$xsd" ]; then
	skip "no junit-10.xsd at $xsd (jenkinsci/xunit-plugin, see above; JUNIT_XSD=FILE)"
	skip "no junit-10.xsd at $xsd"
	skip "no junit-10.xsd at $xsd"
else
	xmllint --noout --schema "$xsd" "$work/junit.xml" >"$work/xsd.out" 2>&1
	status=$?
	check "valid against the Jenkins xUnit plugin's junit-10.xsd (xmllint --schema)" test "$status" = 0
	[ "$status" = 0 ] || head -20 "$work/xsd.out" | diag
	# The schema is no formality: what the old export wrote is refused.
	sed -e 's|<testcase \(.*\)/>|<testcase \1><properties><property name="result" value="pass"/></properties></testcase>|' \
		-e 's|<testsuites |<testsuites skipped="2" |' "$work/junit.xml" >"$work/bad.xml"
	xmllint --noout --schema "$xsd" "$work/bad.xml" >"$work/bad.out" 2>&1
	check "... and it refuses properties inside a testcase and skipped on testsuites" test $? = 3 -a \
		"$(grep -c 'not expected\|not allowed' "$work/bad.out")" -ge 2
	xmllint --noout --schema "$xsd" "$work/junit-url.xml" >"$work/xsd-url.out" 2>&1
	status=$?
	check "with --url, valid against junit-10.xsd too" test "$status" = 0
	[ "$status" = 0 ] || head -20 "$work/xsd-url.out" | diag
fi
python3 - "$work/junit-url.xml" >"$work/url.out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
cases = {c.get("name"): c for c in ET.parse(sys.argv[1]).getroot().iter("testcase")}
page = "result page: http://master:8080/machines/lab-1/runs/run-1/results/"
for name, case in cases.items():
    outs = case.findall("system-out")
    assert len(outs) == 1 and outs[0].text.count(page) == 1, (name, [o.text for o in outs])
assert cases["p"].find("system-out").text == page + "igt@kms@p\n"
assert cases["f"].find("failure").text.startswith("igt@kms@f: fail\n" + page + "igt@kms@f\n")
assert page + "igt@gem@caf%E9-%FF%FE-ok%C3%A9\n" in cases["caf\\xE9-\\xFF\\xFE-ok\u00e9"].find("system-out").text
print("ok")
PY
status=$?
check "with --url, each testcase's system-out (and a failure's text) gives its result's page" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/url.out"

# GitLab's reading (lib/gitlab/ci/parsers/test/junit.rb): one top-level testsuites, the
# testcases of each testsuite under it; a testcase is failed, error or skipped by the element
# it holds, whose text is the details shown; else it passed.
python3 - "$work/junit.xml" >"$work/gitlab.out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
cases = {}
for suite in root.findall("testsuite"):
    assert suite.get("name") == "lab-1/run-1", suite.attrib
    for case in suite.findall("testcase"):
        kinds = [k for k in ("failure", "error", "skipped") if case.find(k) is not None]
        assert len(kinds) <= 1, kinds
        status = {"failure": "failed", "error": "error", "skipped": "skipped"}[kinds[0]] if kinds else "success"
        details = case.find(kinds[0]).text if kinds else None
        assert case.get("classname") and case.get("name") and float(case.get("time")) >= 0
        cases[case.get("classname") + "." + case.get("name")] = (status, details)
want = {"igt.kms.p": "success", "igt.kms.f": "failed", "igt.kms.s": "skipped", "igt.kms.d": "success",
        "igt.kms.i": "error", "igt.kms.n": "skipped", "igt.gem.caf\\xE9-\\xFF\\xFE-oké": "error"}
got = {k: v[0] for k, v in cases.items()}
assert got == want, got
for name, (status, details) in cases.items():
    if status != "success":
        assert details and details.startswith("igt@"), (name, details)
print("ok")
PY
status=$?
check "GitLab's reading: testsuites > testsuite > testcase, each status by its element, with details" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/gitlab.out"

# A failure says why and carries the job's logs; a warning says so in system-out.
python3 - "$work/junit.xml" >"$work/failure.out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
case = {c.get("name"): c for c in root.iter("testcase")}
f = case["f"].find("failure")
assert f.get("message") == "fail: (kms:42) CRITICAL: Failed assertion: crtc->active == 1 & <ok>", f.attrib
assert f.get("type") == "fail", f.attrib
for part in ("igt@kms@f: fail\n", "--- err.txt ---\n", "Failed assertion: crtc->active == 1 & <ok>\n",
             "--- out.txt ---\n", "Subtest f: FAIL", "--- dmesg.txt ---\n", "[IGT] kms: exiting, ret=1"):
    assert part in f.text, (part, f.text)
d = case["d"]
assert d.find("failure") is None and "drm_WARN_ON" in d.find("system-out").text, d.find("system-out").text
assert case["d"].find("system-out").text.startswith("igt@kms@d: dmesg-warn\n")
assert case["n"].find("skipped").get("message") == "notrun"
assert case["p"].find("system-out") is None and len(case["p"]) == 0
print("ok")
PY
status=$?
check "a failure's message is the line that says why, its text the job's err, out and dmesg" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/failure.out"
done_testing

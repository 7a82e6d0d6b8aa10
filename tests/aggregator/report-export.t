#!/usr/bin/env bash
# `bootci-aggregator export`: a build as KCIDB I/O JSON checked against
# KCIDB's published v4.2 schema (kcidb-v4.2.schema.json, exported from
# kcidb-io; validated as kcidb-io does, JSON Schema Draft 7 with format
# checking, by Debian's python3-jsonschema) with every status mapping, and a
# run as JUnit XML read back by Python's XML parser.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

aggregator=$BUILD/host/bin/bootci-aggregator
gen=$SRC/tests/aggregator/report-runs.py
schema=$SRC/tests/aggregator/kcidb-v4.2.schema.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BOOTCI_DATA=$work/data
plan 13

if ! python3 -c 'import jsonschema' 2>/dev/null; then
	for _ in $(seq 13); do skip "python3-jsonschema is not installed (builder/setup/host-deps.sh)"; done
	exit 0
fi

"$aggregator" build add series-1 --tree drm-tip --commit 0123456789abcdef0123456789abcdef01234567 \
	--tier fast --series-title 'drm/i915: a series' --message-id '<cover.1@lists.example>' >"$work/log" 2>&1
"$gen" "$work/run-1" kms@p=pass kms@f=fail kms@s=skip kms@d=dmesg-warn kms@i=incomplete kms@n=notrun gem@z=pass
"$aggregator" ingest --machine lab-1 --build series-1 "$work/run-1" >>"$work/log" 2>&1
check "a generated run ingested for the build" test $? = 0

"$aggregator" export kcidb --build series-1 -o "$work/kcidb.json" >"$work/kcidb.out" 2>&1
check "export kcidb: exit 0" test $? = 0

validate() {
	python3 - "$schema" "$1" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
errors = sorted(validator.iter_errors(doc), key=str)
for e in errors:
    print("%s: %s" % ("/".join(map(str, e.absolute_path)), e.message))
sys.exit(1 if errors else 0)
PY
}
validate "$work/kcidb.json" >"$work/validate.out" 2>&1
status=$?
check "the document is valid KCIDB v4.2 (jsonschema, Draft 7, formats checked)" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/validate.out"

# With --url, each test's log_url is its result's page on serve (tests/aggregator/report-links.t
# opens them).
"$aggregator" export kcidb --build series-1 --url http://master:8080 -o "$work/kcidb-url.json" \
	>>"$work/log" 2>&1 && validate "$work/kcidb-url.json" >"$work/validate-url.out" 2>&1 &&
	python3 -c 'import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
urls = sorted(t["log_url"] for t in tests)
want = sorted("http://master:8080/machines/lab-1/runs/run-1/results/" + t["misc"]["igt_name"] for t in tests)
sys.exit(0 if urls == want and len(urls) == 7 else "log_url %r" % urls)' "$work/kcidb-url.json" >>"$work/validate-url.out" 2>&1
status=$?
check "with --url: valid, each test's log_url its result's page on serve" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/validate-url.out"

python3 - "$work/kcidb.json" >"$work/statuses.out" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
tests = {t["misc"]["igt_name"]: t for t in doc["tests"]}
want = {"igt@kms@p": "PASS", "igt@kms@f": "FAIL", "igt@kms@s": "SKIP", "igt@kms@d": "PASS",
        "igt@kms@i": "ERROR", "igt@kms@n": "MISS", "igt@gem@z": "PASS"}
got = {k: tests[k]["status"] for k in want if k in tests}
problems = [] if got == want else ["statuses %r" % got]
if tests["igt@kms@d"]["misc"].get("warning") != "dmesg-warn":
    problems.append("dmesg-warn's warning %r" % tests["igt@kms@d"]["misc"])
if "warning" in tests["igt@kms@p"]["misc"]:
    problems.append("a pass with a warning")
if tests["igt@kms@p"]["path"] != "igt.kms.p" or tests["igt@kms@p"]["build_id"] != "bootci:series-1":
    problems.append("path/build_id %r" % tests["igt@kms@p"])
c = doc["checkouts"][0]
if c["git_commit_hash"] != "0123456789abcdef0123456789abcdef01234567" or c["message_id"] != "cover.1@lists.example" or c["tree_name"] != "drm-tip":
    problems.append("checkout %r" % c)
print("\n".join(problems) or "ok")
sys.exit(1 if problems else 0)
PY
status=$?
check "statuses: pass PASS, fail FAIL, skip SKIP, dmesg-warn PASS with its warning, incomplete ERROR, notrun MISS" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/statuses.out"

# The schema is no formality: what breaks its rules is refused.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d["tests"][0]["status"] = "BROKEN"; json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1])); d["tests"][0]["path"] = "igt@kms@p"; json.dump(d, open(sys.argv[3], "w"))
d = json.load(open(sys.argv[1])); d["version"]["minor"] = 3; json.dump(d, open(sys.argv[4], "w"))
' "$work/kcidb.json" "$work/bad-status.json" "$work/bad-path.json" "$work/bad-version.json"
validate "$work/bad-status.json" >/dev/null 2>&1
check "the schema refuses a status outside its list" test $? = 1
validate "$work/bad-path.json" >/dev/null 2>&1
check "... a path with '@'" test $? = 1
validate "$work/bad-version.json" >/dev/null 2>&1
check "... a version it does not know (4.3)" test $? = 1

"$aggregator" export kcidb --build series-1 --origin 'Bad-Origin' >"$work/origin.out" 2>&1
status=$?
check "an origin KCIDB refuses: exit 1 naming it" test "$status" = 1 -a -n "$(grep "origin 'Bad-Origin'" "$work/origin.out")"

"$aggregator" export junit --machine lab-1 --run-id run-1 -o "$work/junit.xml" >"$work/junit.out" 2>&1
check "export junit: exit 0" test $? = 0
python3 - "$work/junit.xml" >"$work/junit.check" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
problems = []
if root.tag != "testsuites" or suite is None or suite.get("name") != "lab-1/run-1":
    problems.append("structure")
want = {"tests": "7", "failures": "1", "errors": "1", "skipped": "2"}
got = {k: suite.get(k) for k in want}
if got != want:
    problems.append("counts %r" % got)
cases = {(c.get("classname"), c.get("name")): c for c in suite.findall("testcase")}
if cases[("igt.kms", "f")].find("failure") is None or cases[("igt.kms", "i")].find("error") is None:
    problems.append("failure/error elements")
if cases[("igt.kms", "n")].find("skipped") is None or cases[("igt.kms", "d")].find("failure") is not None:
    problems.append("skipped/dmesg-warn")
print("\n".join(problems) or "ok")
sys.exit(1 if problems else 0)
PY
status=$?
check "the JUnit XML parses, with its counts and elements" test "$status" = 0
[ "$status" = 0 ] || diag <"$work/junit.check"
"$aggregator" export junit --machine lab-1 --run-id nope >"$work/nope.out" 2>&1
check "an unknown run: exit 1" test $? = 1
"$aggregator" export kcidb >"$work/usage.out" 2>&1
check "export kcidb without --build: exit 2" test $? = 2

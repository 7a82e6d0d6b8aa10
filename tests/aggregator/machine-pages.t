#!/usr/bin/env bash
# A machine's page and a run's page over real HTTP (report/machine_pages.h),
# after real ingests: the front page and the matrix link the machines; a
# machine lists its runs and consoles; a run shows each boot's record, its
# pstore record escaped, its console, its results linked, its archive (the
# bytes uploaded, downloaded again); the JSON beside each page read by
# Python and compared with the HTML; the machines' own API (collect's GET of
# a run, with its token) unchanged; bad pages and names refused.
set -uo pipefail
# shellcheck source=tests/aggregator/pages-lib.sh
. "$SRC/tests/aggregator/pages-lib.sh"
plan 36

pages_store
check "two builds, four runs ingested" test $? = 0
pages_crash_run
check "a run whose boot died ingested, with its pstore record" test $? = 0
# Boot 1 of lab-3's console, as serve keeps it, tied to the run by its note.
mkdir -p "$data/consoles/lab-3"
printf '== bootci-serve: netboot of run crash-run (build crash-1) ==\nLinux version 6.1.0-test\n<b>boot</b>\n[    2.000000] bootci: boot 2 of the run; previous boot: kernel crash (1 pstore records)\n' \
	>"$data/consoles/lab-3/000001.log"
# lab-3's disk marked for a re-deploy (schedule/deploy.h's mark, as `schedule redeploy` writes it).
mkdir -p "$data/schedule/damaged"
printf 'GPT unreadable <b>\n' >"$data/schedule/damaged/lab-3"
add_machine lab-1 token-1
start_server

get() { curl -s -o "$work/body" -w '%{http_code}' "$base$1"; }

"$gen" "$work/runs/up" kms_flip@basic=pass gem_exec@basic=fail >/dev/null
python3 "$tool" archive good "$work/up.tar.zst" --machine lab-1 --run up1 --dir "$work/runs/up" >/dev/null
up=$(python3 "$tool" put "$(run_url lab-1 up1)" "$work/up.tar.zst" --token token-1)
check "a run uploaded through serve: 201 ($up)" test "${up%% *}" = 201

code=$(get /)
check "the front page: 200" test "$code" = 200
check "... links each machine's page" \
	test "$(grep -c '<tr><td><a href="/machines/lab-[123]">' "$work/body")" = 3
code=$(get /builds/drm-tip-2)
check "the matrix's machine headers link the machine page" \
	grep -q '<th><a href="/machines/lab-1">lab-1</a></th>' "$work/body"

code=$(get /tests/igt@gem_exec@basic)
check "a test's history links each run's machine and run" \
	grep -q '<td><a href="/machines/lab-2">lab-2</a></td><td><a href="/machines/lab-2/runs/[^"]*">' "$work/body"

code=$(get /machines/lab-3)
check "lab-3's page: 200 without a token" test "$code" = 200
check "... its run, linked" grep -q '<a href="/machines/lab-3/runs/crash-run">crash-run</a>' "$work/body"
check "... its console, linked, with the run it netbooted" \
	grep -q '<a href="/machines/lab-3/consoles/1">1</a></td><td>[0-9]*</td><td>20[0-9-]* [0-9:]*</td><td><a href="/machines/lab-3/runs/crash-run">' "$work/body"
check "... its two boots and one crash record counted" \
	grep -q '<td>2</td><td>[^<]*</td><td>1</td></tr>' "$work/body"
check "... its disk's re-deploy and why, escaped" \
	grep -qF '<p class="deploy">Its disk is to be re-deployed at its next boot: GPT unreadable &lt;b&gt;</p>' "$work/body"

code=$(get /machines/lab-3/runs/crash-run)
check "the run page of crash-run: 200" test "$code" = 200
check "... boot 1 and boot 2, each a row" \
	test "$(grep -c '<tr id="boot-[12]">' "$work/body")" = 2
check "... boot 2 says how boot 1 ended and links the record it found" \
	grep -q 'kernel crash (pstore: dmesg-efi_pstore-1)</td><td>[^<]*</td><td><a href="#crash-1">dmesg-efi_pstore-1</a>' "$work/body"
check "... the pstore record's text, escaped" \
	grep -qF 'Kernel panic - not syncing: &lt;b&gt;Fatal&lt;/b&gt; exception' "$work/body"
check "... its console linked on the row of boot 2, which the executor said it was" \
	grep -q '<tr id="boot-2">.*<a href="/machines/lab-3/consoles/1">1</a></td></tr>' "$work/body"
check "... each result links its page" \
	grep -q '<a href="/machines/lab-3/runs/crash-run/results/igt@igt_b@crash">igt@igt_b@crash</a></td><td class="incomplete">' "$work/body"
href=$(grep -o 'href="/machines/lab-3/runs/crash-run/results/igt@igt_a@basic"' "$work/body" | head -1 | sed 's/^href="//; s/"$//')
code=$(get "$href")
check "... and that page answers 200" test "$code" = 200
check "... and links its machine and run back" \
	grep -q 'machine <a href="/machines/lab-3">lab-3</a>, run <a href="/machines/lab-3/runs/crash-run">crash-run</a>' "$work/body"

code=$(get /api/v1/machines/lab-3/runs/crash-run/summary)
check "the run's JSON: 200" test "$code" = 200
check "... its boots, record, console and results as the page shows them" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["machine"] == "lab-3" and r["run_id"] == "crash-run", r
assert [b["index"] for b in r["boots"]] == [1, 2], r["boots"]
assert r["boots"][1]["previous"] == "kernel crash (pstore: dmesg-efi_pstore-1)", r["boots"]
assert [(c["boot"], c["source"], c["name"]) for c in r["crash_records"]] == [(2, "pstore", "dmesg-efi_pstore-1")]
assert [c["boot"] for c in r["consoles"]] == [1] and r["consoles"][0]["run_id"] == "crash-run"
assert r["consoles"][0]["run_boot"] == 2 and [b["consoles"] for b in r["boots"]] == [[], [1]]
assert sorted(x["test"] for x in r["results"]) == ["igt@igt_a@basic", "igt@igt_b@crash"]
assert r["counts"] == {"pass": 1, "incomplete": 1}, r["counts"]
assert r["url"] == "/machines/lab-3/runs/crash-run"
' "$work/body"

code=$(get /machines/lab-1/runs/up1)
check "the uploaded run's page links its archive" \
	grep -q '<a href="/machines/lab-1/runs/up1/archive">download</a>' "$work/body"
code=$(curl -s -o "$work/down.tar.zst" -D "$work/head" -w '%{http_code}' "$base/machines/lab-1/runs/up1/archive")
check "... the archive: 200, the bytes uploaded" \
	sh -c "test $code = 200 && cmp -s '$work/up.tar.zst' '$work/down.tar.zst'"
check "... as a download named after the run" \
	grep -qi '^Content-Disposition: attachment; filename="lab-1-up1.tar.zst"' "$work/head"
code=$(get /machines/lab-1/runs/nope/archive)
check "... a run that is not stored has none: 404" test "$code" = 404

code=$(get /api/v1/machines/lab-1)
check "lab-1's JSON: 200" test "$code" = 200
check "... its three runs newest first, up1 first" /usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["machine"] == "lab-1" and m["runs_total"] == 3 and m["pages"] == 1, m
assert m["runs"][0]["run_id"] == "up1", m["runs"]
assert all(r["url"] == "/machines/lab-1/runs/" + r["run_id"] for r in m["runs"])
assert m["state"] is None and m["jobs"] == [] and m["consoles"] == []
' "$work/body"

code=$(get '/machines/lab-1?page=2')
check "a page past its runs: 404" test "$code" = 404
code=$(get '/api/v1/machines/lab-1?page=x')
check "a page that is not a number: 400" test "$code" = 400
check "... said as JSON" /usr/bin/python3 -c '
import json, sys
assert "page" in json.load(open(sys.argv[1]))["error"]
' "$work/body"
code=$(get /machines/lab-9)
check "a machine the store does not know: 404" test "$code" = 404
code=$(get '/machines/lab%3Cx%3E')
check "a name that cannot be a machine's: 400" test "$code" = 400

# The machines' own API beside it: collect's GET of its run still wants its token.
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v1/machines/lab-1/runs/up1")
check "collect's GET of a run without a token: still 401" test "$code" = 401
code=$(curl -s -o "$work/body" -w '%{http_code}' -H 'Authorization: Bearer token-1' \
	"$base/api/v1/machines/lab-1/runs/up1")
check "... with it: 200, the run stored" sh -c "test $code = 200 && grep -q stored '$work/body'"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$base/api/v1/machines/lab-1")
check "PUT to a machine's JSON: 405" test "$code" = 405
stop_server

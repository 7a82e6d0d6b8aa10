#!/usr/bin/env bash
# bootci-aggregator's command line (bootci-aggregator-results(1), bootci-results(1)):
# usage errors exit 2, `results -o` replaces OUT atomically (a run that fails
# half-way leaves the old OUT and no temporary; the same run to standard output
# shows it did write some JSON first), and a file over the 64 MiB limit is a
# warning naming it, not a failure.
# The results part holds for bootci-results too (the same command alone), which
# is a static binary.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
aggregator=$BUILD/host/bin/bootci-aggregator
results_bin=$BUILD/host/bin/bootci-results
scenario=$SRC/../shared/conformance/igt-runner-results/normal-run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -d "$scenario" ]; then
	echo "1..1"
	echo "not ok 1 - no igt_runner conformance data at $scenario"
	exit 1
fi
# results_dir NAME: a writable copy of igt's normal-run scenario (five jobs)
results_dir() {
	cp -r "$scenario" "$work/$1" && chmod -R u+w "$work/$1" && rm -f "$work/$1/reference.json" "$work/$1/README.txt"
}

# ---- usage: exit status 2 and the usage on stderr
usage_error() { # PROGRAM DESCRIPTION ARGS...
	local program=$1 description=$2
	shift 2
	"$@" >"$work/usage.out" 2>"$work/usage.err"
	local status=$? usage
	usage=$(grep -c "usage: $program" "$work/usage.err")
	check "$description: exit status 2 (got $status), usage on stderr, nothing on stdout" \
		test "$status:$usage" = 2:1 -a ! -s "$work/usage.out"
}
usage_error bootci-aggregator "no command" "$aggregator"
usage_error bootci-aggregator "an unknown command" "$aggregator" no-such-command

# results_claims PROGRAM LABEL COMMAND...: the results command's claims, COMMAND
# being `bootci-aggregator results` or `bootci-results`, LABEL its name in checks.
results_claims() {
	local program=$1 label=$2 status
	shift 2
	usage_error "$program" "$label: without DIR" "$@"
	usage_error "$program" "$label: with two DIRs" "$@" "$scenario" "$scenario"
	usage_error "$program" "$label: with an unknown option" "$@" --no-such-option "$scenario"
	usage_error "$program" "$label: -o without OUT" "$@" "$scenario" -o
	"$@" --help >"$work/help.out" 2>/dev/null
	status=$?
	check "$label: --help: status 0, its usage on stdout" \
		test "$status:$(grep -cE 'DIR \[-o OUT\]' "$work/help.out")" = 0:1

	# ---- -o: complete or nothing
	rm -rf "$work/ok" "$work/broken" "$work/big" "$work"/*.json
	results_dir ok
	"$@" "$work/ok" -o "$work/ok.json" 2>"$work/ok.err"
	check "$label: -o: a good folder writes OUT (status 0)" test $? = 0 -a -s "$work/ok.json"
	check "$label: -o: OUT is whole JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/ok.json"

	results_dir broken
	rm "$work/broken/1/out.txt" && mkdir "$work/broken/1/out.txt"	# job 1 cannot be read
	"$@" "$work/broken" >"$work/broken.stdout" 2>"$work/broken.err"
	check "$label: to stdout, the broken folder fails (status 1) after some JSON was written" \
		test "$?:$(head -c 1 "$work/broken.stdout")" = "1:{"
	check "$label: ... naming the file at fault" grep -q '1/out.txt' "$work/broken.err"
	echo "old results" >"$work/broken.json"
	"$@" "$work/broken" -o "$work/broken.json" 2>"$work/broken-o.err"
	check "$label: -o: the same failure exits 1" test $? = 1
	check "$label: -o: ... and the old OUT is left as it was" test "$(cat "$work/broken.json")" = "old results"
	check "$label: -o: ... with no temporary beside it" test "$(find "$work" -maxdepth 1 -name 'broken.json*' | wc -l)" = 1
	"$@" "$work/broken" -o "$work/absent.json" 2>/dev/null
	check "$label: -o: no OUT appears when there was none" test ! -e "$work/absent.json" -a \
		"$(find "$work" -maxdepth 1 -name 'absent.json*' | wc -l)" = 0
	"$@" "$work/ok" -o "$work/no-such-dir/out.json" 2>"$work/nodir.err"
	check "$label: -o into a missing folder: status 1 and a message naming it" \
		test "$?:$(grep -c 'no-such-dir/out.json' "$work/nodir.err")" = 1:1

	# ---- a file over the limit: a warning naming it, results still made
	results_dir big
	python3 - "$work/big/0/out.txt" <<-'PY'
	import sys
	line = 'flood line of a test program that writes far too much, 0123456789\n'
	with open(sys.argv[1], 'a') as f:
	    f.write(line * ((65 << 20) // len(line) + 1))
	PY
	"$@" "$work/big" -o "$work/big.json" 2>"$work/big.err"
	check "$label: over the limit: status 0" test $? = 0
	check "$label: over the limit: one warning naming the file and the limit" \
		test "$(grep -c "^warning: $work/big/0/out.txt: [0-9]* bytes, over the 67108864-byte limit" "$work/big.err")" = 1 ||
		diag <"$work/big.err"
	check "$label: over the limit: results.json holds a marker where text was left out" \
		grep -q 'bootci: [0-9]* bytes left out here' "$work/big.json"
	check "$label: over the limit: the result still comes from its protocol lines" \
		test "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tests"]["igt@successtest@first-subtest"]["result"])' "$work/big.json")" = pass
	check "$label: over the limit: results.json stays under the limit" test "$(stat -c %s "$work/big.json")" -lt $((72 << 20))
	"$@" "$work/ok" -o "$work/ok2.json" 2>"$work/ok2.err"
	check "$label: within the limit: no warning" test ! -s "$work/ok2.err"
}
results_claims bootci-aggregator "bootci-aggregator results" "$aggregator" results
results_claims bootci-results bootci-results "$results_bin"
# readelf (binutils, with the toolchain): no program interpreter, no shared library needed.
readelf -l "$results_bin" >"$work/phdrs" 2>&1 && readelf -d "$results_bin" >"$work/dynamic" 2>&1
check "bootci-results is static (no dynamic loader, no shared library)" \
	eval "grep -q LOAD '$work/phdrs' && ! grep -q INTERP '$work/phdrs' && ! grep -q NEEDED '$work/dynamic'"

done_testing

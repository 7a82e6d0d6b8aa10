#!/usr/bin/env bash
# The results generator on igt_runner's socket protocol (issue 9 item 1): job
# folders with `comms` dumps must give what IGT 1.27.1's igt_results gives,
# key by key and byte by byte (tests/resultgen/comms-compare.py).
# 1. The committed folders of tests/resultgen/comms-scenarios/ (README.txt).
# 2. When IGT is built (build/igt/build, `make` does it from ../shared/igt/):
#    real IGT binaries run on this host by igt_runner (no GPU here: they skip
#    in their fixtures or fail to open a device, which is still the protocol),
#    socket protocol in single and multiple mode and the text protocol, each
#    folder judged by igt_results (the reference) and by bootci-aggregator.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

aggregator=$BUILD/host/bin/bootci-aggregator
compare=$SRC/tests/resultgen/comms-compare.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

same() {
	local report status=0
	report=$("$compare" "$@") || status=$?
	[ -z "$report" ] || echo "$report"
	return "$status"
}

for dir in "$SRC"/tests/resultgen/comms-scenarios/*/; do
	name=$(basename "$dir")
	check "$name: bootci-aggregator results" "$aggregator" results "$dir" -o "$work/$name.json" &&
		check "$name: the same as igt_results' reference.json" same "$work/$name.json" "$dir/reference.json"
done

igt=$BUILD/igt/build
if [ ! -x "$igt/runner/igt_runner" ] || [ ! -x "$igt/runner/igt_results" ] || [ ! -f "$BUILD/igt/test-list.txt" ]; then
	skip "no IGT build in $igt (make builds it when ../shared/igt/ holds IGT's source)"
	done_testing
	exit 0
fi
# igt_runner wants test-list.txt beside the binaries.
mkdir "$work/tests"
for t in core_auth core_getversion sw_sync syncobj_basic syncobj_wait vgem_basic kms_prop_blob \
	kms_getfb dumb_buffer drm_read; do
	[ -x "$igt/tests/$t" ] && ln -s "$igt/tests/$t" "$work/tests/$t"
done
cp "$BUILD/igt/test-list.txt" "$work/tests/"
cat >"$work/list.txt" <<'LIST'
igt@core_auth@basic-auth
igt@core_getversion
igt@sw_sync@alloc_timeline
igt@sw_sync@sync_busy
igt@syncobj_basic@bad-destroy
igt@syncobj_wait@invalid-wait-bad-flags
igt@syncobj_wait@wait-all-for-submit-delayed-submit
igt@vgem_basic@setversion
igt@kms_prop_blob@basic
igt@kms_getfb@getfb-handle-zero
igt@dumb_buffer@create-valid-dumb
igt@drm_read@invalid-buffer
LIST
# run NAME [igt_runner options]: one igt_runner run to $work/NAME, its reference by igt_results
run() {
	local name=$1
	shift
	"$igt/runner/igt_runner" "$@" --test-list "$work/list.txt" "$work/tests" "$work/$name" \
		>"$work/$name.log" 2>&1 &&
		rm -f "$work/$name/results.json" &&
		"$igt/runner/igt_results" "$work/$name" >>"$work/$name.log" 2>&1
}
check "igt_runner, socket protocol, single mode" run socket-single
check "igt_runner, socket protocol, multiple mode" run socket-multiple -m
check "igt_runner, text protocol" env IGT_RUNNER_DISABLE_SOCKET_COMMUNICATION=1 \
	bash -c "$(declare -f run); igt=$igt work=$work run text-single"
check "the socket runs' tests spoke the socket (comms with more than the exec packet)" \
	test "$(find "$work/socket-single" -name comms -size +100c | wc -l)" -gt 0
check "socket-single: bootci-aggregator results" \
	"$aggregator" results "$work/socket-single" -o "$work/socket-single.ours.json" &&
	check "socket-single: the same as igt_results'" \
		same "$work/socket-single.ours.json" "$work/socket-single/results.json"
# The text protocol: comms holds the exec packet only, the text files judge.
check "text-single: bootci-aggregator results" \
	"$aggregator" results "$work/text-single" -o "$work/text-single.ours.json" &&
	check "text-single: the same as igt_results' (key order free)" \
		same --any-order "$work/text-single.ours.json" "$work/text-single/results.json"
# Multiple mode: igt_results reads past its err buffer for a job's later subtests.
check "socket-multiple: bootci-aggregator results" \
	"$aggregator" results "$work/socket-multiple" -o "$work/socket-multiple.ours.json" \
	2>"$work/socket-multiple.warnings" &&
	check "socket-multiple: the same as igt_results' but where igt_results reads past its buffer" \
		same --overread-from "$work/socket-multiple.warnings" \
		"$work/socket-multiple.ours.json" "$work/socket-multiple/results.json"
done_testing

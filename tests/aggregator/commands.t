#!/usr/bin/env bash
# What a user types at bootci-aggregator's commands: `COMMAND --help` prints
# that command's usage (every command); a usage error shows the command's
# usage; a Message-ID that is not one (a line break in it) is refused at
# `build add` and `publish`, not stored to fail at report time; an odd
# `ingest --machine` gets one clear error naming the option.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
aggregator=${BOOTCI_AGGREGATOR:-$BUILD/host/bin/bootci-aggregator}
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BOOTCI_DATA=$work/data BOOTCI_STORE=

for command in results ingest build machine report metrics export publish schedule bisect serve; do
	"$aggregator" "$command" --help >"$work/out" 2>"$work/err"
	status=$?
	if [ "$status" = 0 ] && [ ! -s "$work/err" ] &&
		head -1 "$work/out" | grep -q "^usage: bootci-aggregator $command" &&
		! grep -q "COMMAND \[ARGS\]" "$work/out"; then
		ok "$command --help: exit 0, $command's usage alone on stdout"
	else
		not_ok "$command --help: exit $status"
		diag <"$work/out"
		diag <"$work/err"
	fi
done
"$aggregator" build --no-such-option >"$work/out" 2>"$work/err"
status=$?
if [ "$status" = 2 ] && [ ! -s "$work/out" ] && grep -q "^usage: bootci-aggregator build add" "$work/err" &&
	! grep -q "COMMAND \[ARGS\]" "$work/err"; then
	ok "build with an unknown option: exit 2, build's usage on stderr"
else
	not_ok "build --no-such-option: exit $status"
	diag <"$work/err"
fi

# bisect: a verb it does not know is a usage error; a build without a bisection, or that is no
# series' build, one clear error each (issue 37).
"$aggregator" bisect frob >"$work/out" 2>"$work/err"
status=$?
check "bisect frob: exit 2 naming the verbs" sh -c "[ $status = 2 ] && grep -q \"bisect: 'frob': expected list, show BUILD, start BUILD or stop BUILD\" '$work/err'"
"$aggregator" bisect show nothing-here >"$work/out" 2>"$work/err"
status=$?
check "bisect show of a build without one: exit 1 saying so" sh -c "[ $status = 1 ] && grep -q 'build nothing-here has no bisection' '$work/err'"
"$aggregator" bisect start nothing-here >"$work/out" 2>"$work/err"
status=$?
check "bisect start of a build not in the store: exit 1 saying so" sh -c "[ $status = 1 ] && grep -q \"no build named 'nothing-here' in the store\" '$work/err'"
"$aggregator" bisect list >"$work/out" 2>"$work/err"
check "bisect list with none: exit 0, nothing printed" sh -c "[ $? = 0 ] && [ ! -s '$work/out' ]"

# A line break in a Message-ID would end the reply's header: refused when given.
"$aggregator" build add b1 --tree t --commit c --tier fast --series-title T \
	--message-id $'<1@x>\nBcc: all@example.com' >"$work/out" 2>"$work/err"
status=$?
"$aggregator" build show b1 >"$work/show" 2>&1
if [ "$status" = 2 ] && grep -qF "build add: --message-id '<1@x>\\x0aBcc: all@example.com': not one Message-ID" "$work/err" &&
	[ "$(grep -c . "$work/err")" = 1 ] && ! grep -q "^name b1" "$work/show"; then
	ok "build add --message-id with a line break: exit 2, one line saying why, nothing stored"
else
	not_ok "build add --message-id with a line break: exit $status"
	diag <"$work/err"
	diag <"$work/show"
fi
"$aggregator" build add b1 --tree t --commit c --tier fast --message-id $'<1@\x01x>' 2>"$work/err"
check "build add --message-id with another control character is refused too" test $? = 2
"$aggregator" build add b1 --tree t --commit c --tier fast --message-id $'<1@x>\n' 2>"$work/err"
check "build add --message-id ending in a line break is refused too" test $? = 2
"$aggregator" build add b1 --tree t --commit c --tier fast --series-title T --message-id '<1.2@x.example>' 2>"$work/err"
status=$?
check "build add with a good Message-ID: stored ($status)" sh -c "[ $status = 0 ] && '$aggregator' build show b1 | grep -qx 'message-id <1.2@x.example>'"
mkdir -p "$work/image"
"$aggregator" publish --build p1 --tree t --commit c --tier fast --series-title T \
	--message-id $'<2@x>\r\nX: y' "$work/image" >"$work/out" 2>"$work/err"
status=$?
check "publish --message-id with a line break: exit $status, refused before anything is read" \
	sh -c "[ $status = 2 ] && grep -qF -- \"--message-id '<2@x>\\\\x0d\\\\x0aX: y': not one Message-ID\" '$work/err'"

# ingest --machine with a blank and a slash: one error naming the option, not the folder.
run=$SRC/tests/resultgen/scenarios/piglit-style-default-level
"$aggregator" ingest --machine 'lab 1/a' "$run" "$run" >"$work/out" 2>"$work/err"
status=$?
if [ "$status" = 2 ] && [ "$(grep -c . "$work/err")" = 1 ] &&
	grep -qF "ingest: --machine 'lab 1/a': not a word ([A-Za-z0-9._-], 1 to 128 bytes, not . or ..)" "$work/err" &&
	! grep -qF "$run" "$work/err"; then
	ok "ingest --machine 'lab 1/a': exit 2, one line naming the option and the rule"
else
	not_ok "ingest --machine 'lab 1/a': exit $status"
	diag <"$work/err"
fi
"$aggregator" ingest "$run" >"$work/out" 2>"$work/err"
status=$?
if [ "$status" = 1 ] && [ "$(grep -o -F "$run" "$work/err" | wc -l)" = 1 ] &&
	grep -qF "a results folder does not name its machine: give one (--machine NAME)" "$work/err"; then
	ok "ingest of a results folder without --machine: the folder named once, and what to give"
else
	not_ok "ingest without --machine: exit $status"
	diag <"$work/err"
fi
done_testing

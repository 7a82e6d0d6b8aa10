# shellcheck shell=bash
# Sourced by the TAP scripts (tests/*/*.t): numbered results and the plan.
# Scripts either call `plan N` first or `done_testing` last.
tap_count=0

plan() {
	echo "1..$1"
}

done_testing() {
	echo "1..$tap_count"
}

ok() {
	tap_count=$((tap_count + 1))
	echo "ok $tap_count - $1"
}

not_ok() {
	tap_count=$((tap_count + 1))
	echo "not ok $tap_count - $1"
}

skip() {
	tap_count=$((tap_count + 1))
	echo "ok $tap_count # SKIP $1"
}

# check DESCRIPTION COMMAND...: one result for whether COMMAND succeeds
check() {
	local description=$1
	shift
	if "$@"; then
		ok "$description"
	else
		not_ok "$description"
		return 1
	fi
}

# diag: copies its input as TAP comments
diag() {
	sed 's/^/# /'
}

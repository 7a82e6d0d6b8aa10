#!/usr/bin/env bash
# ingest, report and serve run with malloc asking for transparent huge pages
# (aggregator/main.c, huge_pages_exec): the program executes its own file once
# more with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 when the kernel gives huge
# pages on request ([madvise]). A user's own hugetlb value is left alone, other
# tunables are kept, other commands are not executed again, the process keeps
# its name, and the memory of a running serve is marked for huge pages
# (THPeligible in its smaps). With the aggregator under test an ASan build
# (BOOTCI_AGGREGATOR), the smaps checks do not apply: ASan's allocator is not
# glibc's.
set -uo pipefail
. "$(dirname "$0")/serve-lib.sh"
export LC_ALL=C

plan 10

mode=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
on_request=false
[[ $mode == *"[madvise]"* ]] && on_request=true
diag <<<"transparent huge pages here: ${mode:-none}"
self=$(realpath "$aggregator")

# traced NAME ENV... -- ARGS...: runs the aggregator with ENV (env's arguments: -u VAR or
# VAR=VALUE) under strace (execve calls with their environments); its output in
# $work/NAME.out, its status in $work/NAME.rc, the trace in $work/NAME.trace.
traced() {
	local name=$1
	shift
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	env "${env[@]}" strace -f -v -s 4096 -e trace=execve -o "$work/$name.trace" \
		"$aggregator" "$@" >"$work/$name.out" 2>&1
	echo $? >"$work/$name.rc"
	grep -c 'execve(' "$work/$name.trace" >"$work/$name.execs"
}

mkdir -p "$work/data"
traced report -u GLIBC_TUNABLES -- report --data "$work/data" --build nosuch
traced report-small GLIBC_TUNABLES=glibc.malloc.hugetlb=0 -- \
	report --data "$work/data" --build nosuch
traced other GLIBC_TUNABLES=glibc.malloc.tcache_count=7 -- \
	report --data "$work/data" --build nosuch
traced build -u GLIBC_TUNABLES -- build show nosuch --data "$work/data"

if $on_request; then
	check "report executes itself again, as $(cat "$work/report.execs") execve calls show" \
		test "$(cat "$work/report.execs")" = 2
	second=$(grep 'execve(' "$work/report.trace" | sed -n 2p)
	check "... its own file by path ($self), with the same arguments" \
		grep -qF "execve(\"$self\", [\"$aggregator\", \"report\", \"--data\", \"$work/data\", \"--build\", \"nosuch\"]" <<<"$second"
	check "... and GLIBC_TUNABLES=glibc.malloc.hugetlb=1 and the mark in its environment" \
		bash -c 'grep -qF "\"GLIBC_TUNABLES=glibc.malloc.hugetlb=1\"" <<<"$1" &&
			grep -qF "\"BOOTCI_HUGE_PAGES_EXEC=1\"" <<<"$1"' _ "$second"
	check "... keeping the tunables already set (glibc.malloc.tcache_count=7 first)" \
		grep -q '"GLIBC_TUNABLES=glibc.malloc.tcache_count=7:glibc.malloc.hugetlb=1"' \
		"$work/other.trace"
else
	check "report does not execute itself again without [madvise] huge pages" \
		test "$(cat "$work/report.execs")" = 1
	check "... nor sets the tunable" bash -c '! grep -q hugetlb=1 "$1"' _ "$work/report.trace"
	check "... nor the mark" bash -c '! grep -q BOOTCI_HUGE_PAGES_EXEC "$1"' _ \
		"$work/report.trace"
	check "... with other tunables set neither" test "$(cat "$work/other.execs")" = 1
fi
check "a user's own glibc.malloc.hugetlb=0 is kept: one execve" \
	test "$(cat "$work/report-small.execs")" = 1
check "the report says the same ($(head -c 80 "$work/report.out")) and exits the same" \
	bash -c 'grep -q "no build named .nosuch." "$1/report.out" && cmp -s "$1/report.out" \
		"$1/report-small.out" && [ "$(cat "$1/report.rc")" = "$(cat "$1/report-small.rc")" ] &&
		[ "$(cat "$1/report.rc")" != 0 ]' _ "$work"
check "build, a command of small memory, is not executed again" \
	test "$(cat "$work/build.execs")" = 1

# A running serve: its name as ps shows it, its heap and arenas marked for huge pages (madvise).
touch "$work/tokens"
thp_areas() { grep -c '^THPeligible: *1' "/proc/$server_pid/smaps"; }
name=$(basename "$aggregator" | cut -c1-15)
unset GLIBC_TUNABLES
start_server
huge=$(thp_areas)
comm=$(cat "/proc/$server_pid/comm")
stop_server
check "serve keeps its name ($comm) and ends cleanly on SIGTERM ($server_status)" \
	test "$comm" = "$name" -a "$server_status" = 0
GLIBC_TUNABLES=glibc.malloc.hugetlb=0 start_server
small=$(thp_areas)
stop_server
if $on_request && [ -z "${BOOTCI_AGGREGATOR:-}" ]; then
	check "serve's memory is marked for huge pages ($huge areas THPeligible)" test "$huge" -gt 0
	check "with glibc.malloc.hugetlb=0, none is ($small areas)" test "$small" = 0
else
	skip "serve's memory marked for huge pages: not [madvise] here, or not glibc's malloc"
	skip "with glibc.malloc.hugetlb=0, none: not [madvise] here, or not glibc's malloc"
fi

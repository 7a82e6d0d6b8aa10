#!/bin/sh
# Runs IGT's own igt_runner inside the IGT test image, as the executor's test
# program (bootci.test="/bin/sh /usr/libexec/bootci/igt-runner-vm.sh ..."), so
# that the same VM runs the same tests under bootci and under igt_runner
# (tests/lab/igt-real.t, tests/bench/igt-vs-runner). For each RUN, in order:
#   /results/igt-runner/RUN  igt_runner's results folder
#   /results/igt-runner/RUN.ftrace.txt  the kernel's trace buffer of that run, when
#                            the command line enabled trace events (trace_event=...):
#                            tests/bench/igt-own-gaps.py reads it, as it reads the
#                            executor's bootci-ftrace.txt
# RUN is words joined by '-': `text` (IGT_RUNNER_DISABLE_SOCKET_COMMUNICATION=1)
# or `socket` (igt_runner's default), then `single` or `multiple` (-m), then
# optionally `sync` (--sync), then optionally `rN` (a round of a bench: the same
# run again into its own folder). In single mode the testlist's lines naming a whole
# binary are first expanded to its subtests (--list-subtests), as bootci's
# executor does, so that both runners run the same jobs (igt_runner would run
# such a binary as one job). Busybox sh: no bashisms.
#
# usage: igt-runner-vm.sh TESTLIST RUN...
set -u
testlist=$1
shift
tests=/usr/libexec/igt-gpu-tools
PATH=/usr/bin:/bin:/usr/sbin:/sbin
export PATH
mkdir -p /results/igt-runner || exit 1

# expand TESTLIST OUT: one igt@bin@sub line per subtest of a binary-only line
expand() {
	sed 's/#.*//' "$1" | while read -r line; do
		[ -n "$line" ] || continue
		bin=${line#igt@}
		case $bin in
		*@*) echo "$line" ;;
		*)
			subs=$("$tests/$bin" --list-subtests 2>/dev/null)
			if [ -n "$subs" ]; then
				echo "$subs" | sed "s/^/igt@$bin@/"
			else
				echo "$line"
			fi
			;;
		esac
	done >"$2"
}
expanded=/tmp/igt-runner-vm.testlist
expand "$testlist" "$expanded" || exit 1
tracing=/sys/kernel/tracing
[ -e $tracing/set_event ] || mount -t tracefs nodev $tracing 2>/dev/null
traced=""
grep -q . $tracing/set_event 2>/dev/null && traced=yes # (tracefs files have no size)
status=0
for run in "$@"; do
	opts=""
	kind=${run%-r[0-9]*}
	case $kind in
	text-*) proto=text ;;
	socket-*) proto=socket ;;
	*) echo "igt-runner-vm: $run: not text-* or socket-*" >&2; exit 2 ;;
	esac
	list=$expanded
	case $kind in
	*-multiple*) opts="$opts -m" list=$testlist ;;
	esac
	case $kind in
	*-sync) opts="$opts --sync" ;;
	esac
	rm -rf "/results/igt-runner/$run" "/results/igt-runner/$run.ftrace.txt"
	[ -z "$traced" ] || : >$tracing/trace
	echo "igt-runner-vm: $run: igt_runner$opts --test-list $list $tests /results/igt-runner/$run"
	# shellcheck disable=SC2086 # $opts is a list of words
	if [ "$proto" = text ]; then
		IGT_RUNNER_DISABLE_SOCKET_COMMUNICATION=1 igt_runner $opts --test-list "$list" \
			"$tests" "/results/igt-runner/$run"
	else
		igt_runner $opts --test-list "$list" "$tests" "/results/igt-runner/$run"
	fi
	rc=$?
	echo "igt-runner-vm: $run: igt_runner exited with status $rc"
	[ -z "$traced" ] || cat $tracing/trace >"/results/igt-runner/$run.ftrace.txt"
	[ "$rc" = 0 ] || status=$rc
	sync
done
exit $status

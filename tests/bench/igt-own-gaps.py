#!/usr/bin/env python3
"""Each runner's own gap between jobs, by the kernel's trace events: from one
test process's exit to the next test's exec.

tests/bench/igt-gaps.py measures from a test's `[IGT] ...: exiting` to the next
one's `executing`, which under TCG is mostly the test binaries' own end and
start (exit handlers, the dynamic loader, IGT's set-up): the same for both
runners. What a runner itself spends between two tests (waiting for the exit,
its journal, its syncs, the next fork and the child's set-up before exec) lies
between the kernel's `sched_process_exit` of one test process and the
`sched_process_exec` of the next. With `trace_event=sched:sched_process_exec,
sched:sched_process_exit` on the kernel command line, the executor saves the
trace buffer as RUN/bootci-ftrace.txt (with BOOTCI_GAP_TRACE=1) and
tests/lab/igt-runner-vm.sh saves igt_runner's as RUN.ftrace.txt: both are read
the same way here.

A test process is one whose exec names a file in TESTS_DIR. The run's jobs are
the last N of them, N the job folders of RESULTS_DIR (what came before are
`--list-subtests` calls while the run was planned). A job whose process was
killed or whose exit is missing from the buffer has no gap after it.

usage: igt-own-gaps.py [--brief] FTRACE RESULTS_DIR [TESTS_DIR]
   prints `own_gaps G own_ms_mean M own_ms_median D lost L`, L the events the
   buffer lost (a gap measured across a loss is still right: only its two events count);
   with --brief only `M D`, or `- -` when FTRACE is missing or empty or gives no gap, and
   the events lost said on stderr (the benches' columns)
"""
import os
import re
import statistics
import sys

EVENT = re.compile(r'^\s*.+?-(\d+)\s+\[\d+\]\s+\S+\s+(\d+)\.(\d+): (sched_process_exec|sched_process_exit): (.*)$')
FILENAME = re.compile(r'filename=(\S+) pid=(\d+)')
PID = re.compile(r' pid=(\d+)')
ENTRIES = re.compile(r'^# entries-in-buffer/entries-written: (\d+)/(\d+)')


def read_events(path):
    """[(usec, 'exec'|'exit', pid, filename or None)] in the buffer's order, and the events lost."""
    events, lost = [], 0
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = ENTRIES.match(line)
            if m:
                lost = int(m.group(2)) - int(m.group(1))
                continue
            m = EVENT.match(line)
            if not m:
                continue
            usec = int(m.group(2)) * 1000000 + int(m.group(3).ljust(6, '0')[:6])
            if m.group(4) == 'sched_process_exec':
                f_m = FILENAME.search(m.group(5))
                if f_m:
                    events.append((usec, 'exec', int(f_m.group(2)), f_m.group(1)))
            else:
                p_m = PID.search(' ' + m.group(5))
                if p_m:
                    events.append((usec, 'exit', int(p_m.group(1)), None))
    return events, lost


def own_gaps(events, jobs, tests_dir):
    """The gaps (ms) from each job's test process exit to the next job's exec."""
    prefix = tests_dir.rstrip('/') + '/'
    execs = [(i, usec, pid) for i, (usec, kind, pid, name) in enumerate(events)
             if kind == 'exec' and name.startswith(prefix)]
    execs = execs[-jobs:] if jobs else []
    gaps = []
    for (i, _, pid), (_, next_usec, _) in zip(execs, execs[1:]):
        exit_usec = next((usec for usec, kind, p, _ in events[i + 1:] if kind == 'exit' and p == pid), None)
        if exit_usec is not None and next_usec >= exit_usec:
            gaps.append((next_usec - exit_usec) / 1000.0)
    return gaps


def main():
    args = sys.argv[1:]
    brief = bool(args) and args[0] == '--brief'
    if brief:
        args = args[1:]
    if len(args) not in (2, 3):
        sys.exit(__doc__.split('\n\n')[-1])
    trace, results = args[0], args[1]
    tests_dir = args[2] if len(args) == 3 else '/usr/libexec/igt-gpu-tools'
    if brief and (not os.path.isfile(trace) or os.path.getsize(trace) == 0):
        print('- -')
        return
    events, lost = read_events(trace)
    jobs = sum(1 for d in os.listdir(results) if d.isdigit())
    gaps = own_gaps(events, jobs, tests_dir)
    mean = statistics.mean(gaps) if gaps else 0.0
    median = statistics.median(gaps) if gaps else 0.0
    if not brief:
        print(f'own_gaps {len(gaps)} own_ms_mean {mean:.2f} own_ms_median {median:.2f} lost {lost}')
        return
    if lost:
        print(f'igt-own-gaps.py: {trace}: the trace buffer lost {lost} events', file=sys.stderr)
    print(f'{mean:.2f} {median:.2f}' if gaps else '- -')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Where bootci's gap between jobs goes: a run folder of the executor booted
with BOOTCI_GAP_TRACE=1 (executor/igt/trace.c) has bootci-gap-trace.txt, one
line per gap with each step's microseconds between one job's reaping and the
next job's fork. The job folders' dmesg.txt add what the executor cannot see:
from the test's `[IGT] ...: exiting` to its reaping (the test's own end, the
executor waking up), and from the fork to the next test's `[IGT] ...:
executing` (exec, the dynamic loader, IGT's start). The kernel's clock and the
executor's are tied by the next job's `[bootci] [N/M]` marker, stamped just
before it was written (PREMARK_NS).

usage: igt-gap-trace.py RUN_DIR   prints the mean and median of each step in ms
"""
import os
import re
import statistics
import sys

IGT = re.compile(r'^\d+,\d+,(\d+),[^;]*;\[IGT\] (\S+): (executing|exiting)')
MARK = re.compile(r'^\d+,\d+,(\d+),[^;]*;\[bootci\] \[(\d+)/\d+\]')


def records(run, job):
    """(first executing, last exiting, marker) in microseconds of job's dmesg.txt."""
    start = end = mark = None
    try:
        with open(os.path.join(run, str(job), 'dmesg.txt'), encoding='utf-8', errors='replace') as f:
            for line in f:
                m = IGT.match(line)
                if m and m.group(3) == 'executing':
                    start = int(m.group(1)) if start is None else start
                elif m:
                    end = int(m.group(1))
                m = MARK.match(line)
                if m and int(m.group(2)) == job + 1 and mark is None:
                    mark = int(m.group(1))
    except FileNotFoundError:
        pass
    return start, end, mark


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split('\n\n')[-1])
    run = sys.argv[1]
    steps = {}
    order = ['exit_to_reaped']
    with open(os.path.join(run, 'bootci-gap-trace.txt'), encoding='utf-8') as f:
        for line in f:
            words = line.split()
            if len(words) < 6 or words[0] != 'gap':
                continue
            job, nxt = int(words[1]), int(words[2])
            reaped, premark, forked = (int(w) for w in words[3:6])
            _, exiting, _ = records(run, job)
            executing, _, mark = records(run, nxt)
            here = {}
            for w in words[6:]:
                name, _, us = w.partition('=')
                here[name] = here.get(name, 0) + int(us) / 1000.0
            if exiting is not None and executing is not None and mark is not None:
                offset_us = mark - premark / 1000.0
                here['exit_to_reaped'] = reaped / 1000.0 + offset_us - exiting
                here['fork_to_executing'] = executing - (forked / 1000.0 + offset_us)
                here['total_gap'] = executing - exiting
            for name, ms in here.items():
                if name not in order:
                    order.append(name)
                steps.setdefault(name, []).append(ms / 1000.0 if name in
                                                  ('exit_to_reaped', 'fork_to_executing', 'total_gap')
                                                  else ms)
    for name in ('fork_to_executing', 'total_gap'):
        if name in order:
            order.remove(name)
            order.append(name)
    print(f'{"step":20} {"mean_ms":>9} {"median_ms":>9} {"n":>5}')
    for name in order:
        v = steps.get(name)
        if v:
            print(f'{name:20} {statistics.mean(v):9.3f} {statistics.median(v):9.3f} {len(v):5}')


main()

#!/usr/bin/env python3
"""The run wall and the runner's own gap between jobs of an igt_runner results
folder (igt_runner's or bootci's: both write one folder per job, 0, 1, ...,
with the job's kernel log in dmesg.txt as /dev/kmsg records).

Every IGT binary logs `[IGT] NAME: executing` when it starts and `[IGT] NAME:
exiting, ret=N` when it ends, so the kernel's clock says when each job's test
ran: the gap between jobs is from one job's `exiting` to the next one's
`executing` (what the runner spends between two tests: its journal, its
syncs, fork and exec, the dynamic loader), the run wall from the first
`executing` to the last `exiting`. Jobs with no `exiting` (killed) have no gap
after them.

usage: igt-gaps.py RESULTS_DIR   prints `jobs N wall_s S gap_ms_mean M gap_ms_median D gaps G`
"""
import os
import re
import statistics
import sys

RECORD = re.compile(r'^\d+,\d+,(\d+),[^;]*;\[IGT\] (\S+): (executing|exiting)')


def job_marks(path):
    """(first executing, last exiting) in microseconds of the job's dmesg.txt, None if absent."""
    start = end = None
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                m = RECORD.match(line)
                if not m:
                    continue
                usec = int(m.group(1))
                if m.group(3) == 'executing':
                    start = usec if start is None else start
                else:
                    end = usec
    except FileNotFoundError:
        pass
    return start, end


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split('\n\n')[-1])
    root = sys.argv[1]
    jobs = sorted((int(d) for d in os.listdir(root) if d.isdigit()))
    marks = [job_marks(os.path.join(root, str(j), 'dmesg.txt')) for j in jobs]
    gaps = []
    for (s0, e0), (s1, e1) in zip(marks, marks[1:]):
        if e0 is not None and s1 is not None and s1 >= e0:
            gaps.append((s1 - e0) / 1000.0)
    starts = [s for s, _ in marks if s is not None]
    ends = [e for _, e in marks if e is not None]
    wall = (max(ends) - min(starts)) / 1e6 if starts and ends else 0.0
    mean = statistics.mean(gaps) if gaps else 0.0
    median = statistics.median(gaps) if gaps else 0.0
    print(f'jobs {len(jobs)} wall_s {wall:.2f} gap_ms_mean {mean:.1f} gap_ms_median {median:.1f} gaps {len(gaps)}')


if __name__ == '__main__':
    main()

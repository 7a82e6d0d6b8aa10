#!/usr/bin/env python3
"""Writes a synthetic igt_runner results folder of N jobs (single mode): job i
is `bin_<i/50>@subtest-<i%50>`, with IGT's out.txt, err.txt, journal.txt and
a kernel log, mostly passes with some fails, skips, warns and dmesg-warns, so
that every part of a results generator works. For the results generator bench
(tests/bench/igt-vs-runner): the same folder for igt_results and for
`bootci-aggregator results`.

usage: igt-synthetic.py DIR N
"""
import os
import sys


def job(i):
    binary, sub = f'bin_{i // 50:05d}', f'subtest-{i % 50:02d}'
    kind = ('pass', 'pass', 'pass', 'fail', 'skip', 'warn', 'dmesg-warn', 'pass')[i % 8]
    result = {'pass': 'SUCCESS', 'fail': 'FAIL', 'skip': 'SKIP', 'warn': 'SUCCESS',
              'dmesg-warn': 'SUCCESS'}[kind]
    exitcode = {'fail': 1, 'skip': 77}.get(kind, 0)
    usec = 1000000 + i * 20000
    out = (f'IGT-Version: 1.27.1-g2b29e8ac0 (x86_64) (Linux: 6.1.0-57-amd64 x86_64)\n'
           f'Starting subtest: {sub}\n')
    if kind == 'fail':
        out += f'(bin:1) CRITICAL: Test assertion failure function {sub}, file x.c:{i}:\n'
    out += f'Subtest {sub}: {result} (0.{i % 1000:03d}s)\n'
    err = f'Starting subtest: {sub}\n'
    if kind == 'warn':
        err += 'some stray text on stderr\n'
    err += f'Subtest {sub}: {result} (0.{i % 1000:03d}s)\n'
    dmesg = (f'14,{3 * i},{usec},-;[IGT] {binary}: executing\n'
             f'14,{3 * i + 1},{usec + 10},-;[IGT] {binary}: starting subtest {sub}\n')
    if kind == 'dmesg-warn':
        dmesg += f'4,{3 * i + 1},{usec + 20},-;WARNING: CPU: 0 PID: {i} at drivers/x.c:1\n'
    dmesg += f'14,{3 * i + 2},{usec + 15000},-;[IGT] {binary}: exiting, ret={exitcode}\n'
    journal = f'{sub}\nexit:{exitcode} (0.{i % 1000:03d}s)\n'
    return binary, sub, {'out.txt': out, 'err.txt': err, 'dmesg.txt': dmesg, 'journal.txt': journal}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[-1])
    root, n = sys.argv[1], int(sys.argv[2])
    os.makedirs(root)
    joblist = []
    for i in range(n):
        binary, sub, files = job(i)
        joblist.append(f'{binary} {sub}\n')
        os.mkdir(os.path.join(root, str(i)))
        for name, text in files.items():
            with open(os.path.join(root, str(i), name), 'w', encoding='utf-8') as f:
                f.write(text)
    with open(os.path.join(root, 'joblist.txt'), 'w', encoding='utf-8') as f:
        f.writelines(joblist)
    with open(os.path.join(root, 'metadata.txt'), 'w', encoding='utf-8') as f:
        f.write('abort_mask : 0\nname : synthetic\ndry_run : 0\nsync : 0\nlog_level : 0\n'
                'overwrite : 0\nmultiple_mode : 0\ninactivity_timeout : 0\nuse_watchdog : 0\n'
                'piglit_style_dmesg : 0\ntest_root : /nonexistent\nresults_path : /nonexistent\n')
    with open(os.path.join(root, 'endtime.txt'), 'w', encoding='utf-8') as f:
        f.write(f'{1 + n * 0.02:.6f}\n')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Writes RUNS synthetic igt_runner results folders of RESULTS jobs each, for
the store benches (tests/bench/ingest-vs-tar.sh, report-vs-piglit.sh): folder
`<prefix>-NNN` is machine NNN's run; job j runs `bench_<j % 100>` subtest
`subtest-<j>` and writes IGT's journal.txt, out.txt, err.txt and dmesg.txt.
Most tests pass, one in 50 skips and one in 200 fails. With --changed N, N
tests of every run that pass in the plain runs do not (one in three fails,
one in three warns in dmesg, one in three is incomplete) and as many fixed:
a build to report against a baseline of the plain runs. With --only N, only
machine N's run of the RUNS is written (the bench packs one at a time).

usage: bench-runs.py DIR RUNS RESULTS [--prefix NAME] [--changed N] [--only N]
"""
import argparse
import os


def kind(job, targets, run, changed):
    """The job's outcome: pass, skip, fail, dmesg-warn or incomplete."""
    base = 'skip' if job % 50 == 7 else 'fail' if job % 200 == 3 else 'pass'
    if not changed:
        return base
    if job in targets and base == 'pass':
        return ('fail', 'dmesg-warn', 'incomplete')[targets[job] % 3]
    # As many fixed as changed: some of the failing tests pass on this machine.
    if base == 'fail' and (job // 200) % 50 == run % 50:
        return 'pass'
    return base


def write_run(path, run, results, changed):
    name = os.path.basename(path)
    os.makedirs(path)
    # Spread per machine, so that each machine has its own regressions.
    targets = {(run * 97 + k * 10007) % results: k for k in range(changed)}

    def put(name, text):
        with open(os.path.join(path, name), 'w', encoding='utf-8') as f:
            f.write(text)

    put('metadata.txt', f'abort_mask : 0\nname : {name}\ndmesg_warn_level : 4\n')
    put('joblist.txt', ''.join(f'bench_{j % 100:02d} subtest-{j}\n' for j in range(results)))
    put('uname.txt', 'Linux bench 6.1.0 #1 SMP x86_64 GNU/Linux\n')
    put('starttime.txt', '1700000000.000000\n')
    put('endtime.txt', '1700003600.000000\n')
    for j in range(results):
        job = os.path.join(path, str(j))
        os.mkdir(job)
        sub, binary = f'subtest-{j}', f'bench_{j % 100:02d}'
        k = kind(j, targets, run, changed)
        verdict = {'pass': 'SUCCESS', 'dmesg-warn': 'SUCCESS', 'skip': 'SKIP',
                   'fail': 'FAIL'}.get(k)
        code = {'skip': 77, 'fail': 98}.get(k, 0)
        out = f'IGT-Version: 1.28-bench\nStarting subtest: {sub}\n'
        journal = f'{sub}\n'
        if verdict:
            out += f'Subtest {sub}: {verdict} (0.010s)\n'
            journal += f'exit:{code} (0.010s)\n'
        usec = 1000000 + j * 20000
        dmesg = f'14,{3 * j},{usec},-;[IGT] {binary}: starting subtest {sub}\n'
        if k == 'dmesg-warn':
            dmesg += f'4,{3 * j + 1},{usec + 20},-;WARNING: CPU: 0 PID: {j} at drivers/x.c:1\n'
        with open(os.path.join(job, 'journal.txt'), 'w', encoding='utf-8') as f:
            f.write(journal)
        with open(os.path.join(job, 'out.txt'), 'w', encoding='utf-8') as f:
            f.write(out)
        open(os.path.join(job, 'err.txt'), 'w', encoding='utf-8').close()
        with open(os.path.join(job, 'dmesg.txt'), 'w', encoding='utf-8') as f:
            f.write(dmesg)


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split('\n\n')[-1])
    parser.add_argument('dir')
    parser.add_argument('runs', type=int)
    parser.add_argument('results', type=int)
    parser.add_argument('--prefix', default='bench')
    parser.add_argument('--changed', type=int, default=0)
    parser.add_argument('--only', type=int)
    args = parser.parse_args()
    for run in range(args.runs):
        if args.only is not None and run != args.only:
            continue
        write_run(os.path.join(args.dir, f'{args.prefix}-{run:03d}'), run, args.results,
                  args.changed)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Compares the verdicts of two results.json files of the same tests run by
bootci (OURS) and by IGT's igt_runner (THEIRS), as tests/lab/igt-real.t and
tests/bench/igt-vs-runner do.

Every test whose verdict differs is either explained, naming its cause, or
unexplained. bootci's executor speaks igt_runner's socket protocol (issue 9
item 1), as igt_runner does by default; the known causes:
  fontconfig   pass under bootci, warn under igt_runner's text protocol
               (IGT_RUNNER_DISABLE_SOCKET_COMMUNICATION=1), and igt_runner's err
               for the test is only cairo's "Fontconfig error": under the text
               protocol stray stderr makes a warn, under the socket protocol the
               packets judge. Only against a text run.
  runner-binary-err  pass under bootci, warn under igt_runner's socket protocol,
               whose err for the test holds bytes that are no text: igt_results
               reads a later subtest's err past the end of its buffer (multiple
               mode; lib/resultgen/comms.c), which bootci's generator does not.
  text-unstarted-dynamic  multiple mode, against a text run: a subtest
               skipped before it starts (`Subtest X: SKIP`, no `Starting
               subtest: X`) is a skip under bootci; from igt_runner's text
               output igt_results gives it every dynamic subtest that started
               earlier in the binary's output (runner/resultgen.c: with no begin
               line the dynamic search starts at the first line), and drops X.
               kms_concurrent's pipe-B..F get pipe-A's Virtual-1 failure. Only
               when each such dynamic subtest is a copy (result and output) of
               the same dynamic subtest of an earlier subtest.
  comms-err-shift  multiple mode, against a text run: warn under bootci, pass
               under igt_runner, and bootci's err for the subtest is another
               subtest's text: from a `comms` file igt_results cuts a later
               subtest's err at the previous one's offsets (igt_results gives the
               same warn on bootci's folder, and on igt_runner's socket runs).
               Only when that err is nothing but pieces of start and result
               lines, one of another subtest: no stray text of the test's own.
  tcg-hrtimer  dmesg-warn on one side, pass on the other, and the only kernel
               warning of that test is "hrtimer: interrupt took N ns": the
               emulated machine (TCG on a loaded host) missed its timer, in
               that runner's run only; not the test's or the runner's doing.
(Until issue 9 item 2 was fixed, multiple mode also lost every subtest skipped in
its binary's igt_fixture, `Subtest X: SKIP` with no `Starting subtest: X`, which
igt_runner journals; bootci journals them now, so that is no longer explained.
Until item 1, bootci spoke the text protocol only and the fontconfig warns were
bootci's, against igt_runner's socket runs; they are no longer explained there.)

usage: igt-compare.py OURS.json THEIRS.json MODE(single|multiple) PROTOCOL(text|socket)
Prints `agree N`, `explained CAUSE N`, `unexplained N` and one line per
unexplained difference; exits 1 when there is any unexplained one.
"""
import collections
import json
import re
import sys

FONTCONFIG = re.compile(r'^Fontconfig (error|warning): ')
# IGT copies its start and result lines to stderr too; no runner counts them as stray text.
MARKER = re.compile(r'^(Starting (dynamic )?subtest: |(Dynamic s|S)ubtest .*: [A-Z]+)')


def load(path):
    # igt_results copies test output into results.json as it is: not always UTF-8.
    with open(path, encoding='utf-8', errors='replace') as f:
        return json.load(f)['tests']


def only_fontconfig(text):
    lines = [l for l in (text or '').splitlines() if l.strip() and not MARKER.match(l)]
    return bool(lines) and all(FONTCONFIG.match(l) for l in lines)


def binary_bytes(text):
    """Bytes that are no text at all: control characters, or not UTF-8 (read as U+FFFD)."""
    return any(c == '\ufffd' or (ord(c) < 32 and c not in '\n\t\r') for c in text or '')


HRTIMER = re.compile(r'^<\d> \[\s*[\d.]+\] hrtimer: interrupt took \d+ ns$')


def only_hrtimer(test):
    lines = [l for l in (test.get('dmesg-warnings') or '').splitlines() if l.strip()]
    return bool(lines) and all(HRTIMER.match(l) for l in lines)


SUBTEST_LINE = re.compile(r'^(?:Starting subtest: (\S+)|Subtest (\S+): )', re.M)


def shifted_err(name, text):
    """TEXT (a subtest's err) is nothing but pieces of start and result lines, one
    of them another subtest's: the err of a neighbour cut at the wrong offsets,
    not stray text of the test's own."""
    sub = name.split('@')[2] if name.count('@') == 2 else None
    lines = [l for l in (text or '').splitlines() if l]
    markers = [l for l in lines if MARKER.match(l)]
    return (sub is not None
            and any((m.group(1) or m.group(2)).lower() != sub
                    for m in SUBTEST_LINE.finditer(text or ''))
            and all(l in markers or any(l in k for k in markers) for l in lines))


def unstarted_skip(parent, tests):
    """PARENT is a skip in TESTS that never printed its start line, without dynamic subtests."""
    t = tests.get(parent)
    sub = parent.split('@')[2]
    return (t is not None and t['result'] == 'skip'
            and not any(m.group(1) and m.group(1).lower() == sub
                        for m in SUBTEST_LINE.finditer(t.get('out') or ''))
            and not any(n.startswith(parent + '@') for n in tests))


def copied_dynamic(name, tests):
    """NAME (binary@subtest@dynamic) in TESTS is a copy of the same dynamic
    subtest of another subtest of that binary: same result, same output."""
    binary, sub, dyn = name.split('@')[1:]
    t = tests[name]
    return any(n != name and n.startswith(f'igt@{binary}@') and n.endswith(f'@{dyn}')
               and n.count('@') == 3 and n.split('@')[2] != sub
               and o['result'] == t['result'] and o.get('out') == t.get('out')
               for n, o in tests.items())


def explain(name, ours, theirs, mode, protocol):
    a = ours.get(name)
    b = theirs.get(name)
    if mode == 'multiple' and protocol == 'text':
        parts = name.split('@')
        if len(parts) == 4 and a is None and b is not None:
            parent = '@'.join(parts[:3])
            if parent not in theirs and unstarted_skip(parent, ours) \
                    and copied_dynamic(name, theirs):
                return 'text-unstarted-dynamic'
        children = [n for n in theirs if n.startswith(name + '@')]
        if len(parts) == 3 and b is None and unstarted_skip(name, ours) and children \
                and all(copied_dynamic(n, theirs) for n in children):
            return 'text-unstarted-dynamic'
        if a and b and a['result'] == 'warn' and b['result'] == 'pass' \
                and shifted_err(name, a.get('err')):
            return 'comms-err-shift'
    if a and b:
        if (protocol == 'text' and a['result'] == 'pass' and b['result'] == 'warn'
                and only_fontconfig(b.get('err'))):
            return 'fontconfig'
        if (protocol == 'socket' and a['result'] == 'pass' and b['result'] == 'warn'
                and binary_bytes(b.get('err')) and not binary_bytes(a.get('err'))):
            return 'runner-binary-err'
        for x, y in ((a, b), (b, a)):
            if x['result'] == 'dmesg-warn' and y['result'] == 'pass' and only_hrtimer(x):
                return 'tcg-hrtimer'
    return None


def main():
    if len(sys.argv) != 5 or sys.argv[3] not in ('single', 'multiple') \
            or sys.argv[4] not in ('text', 'socket'):
        sys.exit(__doc__[__doc__.index('usage:'):])
    ours, theirs = load(sys.argv[1]), load(sys.argv[2])
    mode, protocol = sys.argv[3], sys.argv[4]
    agree, explained, unexplained = 0, collections.Counter(), []
    for name in sorted(set(ours) | set(theirs)):
        a = ours.get(name, {}).get('result', '(absent)')
        b = theirs.get(name, {}).get('result', '(absent)')
        if a == b:
            agree += 1
            continue
        cause = explain(name, ours, theirs, mode, protocol)
        if cause:
            explained[cause] += 1
        else:
            unexplained.append(f'{name}: bootci {a}, igt_runner {b}')
    print(f'agree {agree}')
    for cause in sorted(explained):
        print(f'explained {cause} {explained[cause]}')
    print(f'unexplained {len(unexplained)}')
    for line in unexplained:
        print(f'  {line}')
    sys.exit(1 if unexplained else 0)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Compares bootci's results.json (OURS) with igt_results' (THEIRS) strictly:
the same keys in the same order at every level, strings byte for byte (test
output that is not UTF-8 compared as the bytes it is), numbers by value. The
top-level "cmdline" is left out: IGT 1.27.1's igt_results writes none and
bootci writes the empty one igt's older references have.

With --any-order, the keys of an object may come in another order (for the
text protocol, whose key order is the writer's older business, not this
comparison's).

With --overread-from WARNINGS (the stderr of `bootci-aggregator results`), a
test's "err" may differ where the generator warned that igt_results reads it
past the end of its buffer (lib/resultgen/comms.c: heap bytes there, not
output); each such test is printed as allowed.

usage: comms-compare.py [--any-order] [--overread-from WARNINGS] OURS.json THEIRS.json
"""
import json
import re
import math
import sys


def load(path):
    with open(path, 'rb') as f:
        text = f.read().decode('utf-8', 'surrogateescape')
    return json.loads(text, object_pairs_hook=lambda pairs: pairs)


def is_object(v):
    return isinstance(v, list) and all(isinstance(x, tuple) for x in v) and (v or True)


def diff(a, b, where, out, allowed, allow_overread, any_order=False):
    if isinstance(a, list) and isinstance(b, list) and a and b \
            and isinstance(a[0], tuple) and isinstance(b[0], tuple):
        if where == '':
            a = [kv for kv in a if kv[0] != 'cmdline']
            b = [kv for kv in b if kv[0] != 'cmdline']
        ka, kb = [k for k, _ in a], [k for k, _ in b]
        if (sorted(ka) if any_order else ka) != (sorted(kb) if any_order else kb):
            out.append(f'{where}: keys {ka} != {kb}')
        da, db = dict(a), dict(b)
        for k in ka:
            if k in db:
                diff(da[k], db[k], f'{where}/{k}', out, allowed, allow_overread, any_order)
        return
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        if a != b and not math.isclose(a, b, rel_tol=1e-12):
            out.append(f'{where}: {a!r} != {b!r}')
        return
    if a == b:
        return
    if where.endswith('/err') and where[len('/tests/'):-len('/err')] in allow_overread:
        allowed.append(where)
        return
    out.append(f'{where}: {a!r:.200} != {b!r:.200}')


def main():
    args = sys.argv[1:]
    any_order = '--any-order' in args
    args = [a for a in args if a != '--any-order']
    allow = set()
    if args[:1] == ['--overread-from'] and len(args) > 1:
        with open(args[1], encoding='utf-8', errors='replace') as f:
            allow = set(re.findall(r': (\S+): igt_results reads this test\'s err past', f.read()))
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__[__doc__.index('usage:'):])
    out, allowed = [], []
    diff(load(args[0]), load(args[1]), '', out, allowed, allow, any_order)
    for w in allowed:
        print(f'# allowed: {w}: igt_results reads it past its err buffer')
    for line in out[:30]:
        print(f'# {line}')
    sys.exit(1 if out else 0)


if __name__ == '__main__':
    main()

#!/usr/bin/env bash
# bootci-aggregator's results generator against igt_runner's own scenario
# folders: for each, `bootci-aggregator results` must produce JSON equal as
# data to the folder's reference.json (key order free, numbers by value), and
# bootci-results (the same generator alone) the same bytes.
# The references come from igt's json_tests_data and some have trailing
# commas, which json-c (igt's reader) accepts; the comparer accepts them too.
# tests/resultgen/scenarios/ adds scenarios igt's data lacks; each README.txt
# says how its reference.json follows from igt_runner's rules.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
aggregator=$BUILD/host/bin/bootci-aggregator
results_bin=$BUILD/host/bin/bootci-results
scenarios=$SRC/../shared/conformance/igt-runner-results
if [ ! -d "$scenarios" ]; then
	# The conformance data lives beside the repository (shared/); without it nothing is proven.
	echo "1..1"
	echo "not ok 1 - no igt_runner conformance data at $scenarios"
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/compare.py" <<'PY'
import json, math, sys

def strip_trailing_commas(text):
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == '\\':
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif c == ',':
            j = i + 1
            while j < n and text[j] in ' \t\r\n':
                j += 1
            if j >= n or text[j] not in '}]':
                out.append(c)
        else:
            out.append(c)
        i += 1
    return ''.join(out)

def load(path):
    with open(path, encoding='utf-8') as f:
        return json.loads(strip_trailing_commas(f.read()))

def diff(a, b, where):
    if isinstance(a, bool) or isinstance(b, bool):
        return [] if a is b else [f'{where}: {a!r} != {b!r}']
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
            return []
        return [f'{where}: {a!r} != {b!r}']
    if type(a) is not type(b):
        return [f'{where}: {type(a).__name__} {a!r:.60} != {type(b).__name__} {b!r:.60}']
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f'{where}/{k}: missing from output')
            elif k not in b:
                out.append(f'{where}/{k}: not in reference')
            else:
                out += diff(a[k], b[k], f'{where}/{k}')
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f'{where}: {len(a)} items != {len(b)}']
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f'{where}[{i}]')]
    return [] if a == b else [f'{where}: {a!r:.80} != {b!r:.80}']

problems = diff(load(sys.argv[1]), load(sys.argv[2]), '')
for p in problems[:20]:
    print('#   ' + p)
sys.exit(1 if problems else 0)
PY

n=0
# igt_runner's own scenarios, then bootci's (same layout, expected JSON derived from igt's rules).
for dir in "$scenarios"/*/ "$SRC"/tests/resultgen/scenarios/*/; do
	[ -f "$dir/reference.json" ] || continue
	name=$(basename "$dir")
	n=$((n + 1))
	if ! "$aggregator" results "$dir" -o "$work/$name.json" 2>"$work/$name.err"; then
		echo "not ok $n - $name: bootci-aggregator failed: $(cat "$work/$name.err")"
	elif python3 "$work/compare.py" "$work/$name.json" "$dir/reference.json"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name: differs from reference.json"
	fi
	# bootci-results, the same generator alone: the same bytes.
	n=$((n + 1))
	if ! "$results_bin" "$dir" >"$work/$name.alone.json" 2>"$work/$name.alone.err"; then
		echo "not ok $n - $name: bootci-results failed: $(cat "$work/$name.alone.err")"
	elif cmp -s "$work/$name.json" "$work/$name.alone.json"; then
		echo "ok $n - $name: bootci-results gives the same bytes"
	else
		echo "not ok $n - $name: bootci-results differs from bootci-aggregator results"
	fi
done
echo "1..$n"

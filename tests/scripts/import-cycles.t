#!/usr/bin/python3
# No module of lib/, executor/, builder/ or aggregator/ imports itself through
# others: the graph of file-level imports has no cycle.
#
# The graph. A module is a .c file with the header of the same name beside it
# (lib/strv.c and lib/strv.h are one module, its code and its contract); a
# header with no .c of its name is a module of its own (a component's shared
# declarations such as executor/executor.h, a folder's igt/igt.h or
# resultgen/internal.h, a header-only format). So a header that declares
# several files' functions is named after none of them: executor/boot.c,
# igt/run.c and resultgen/walk.c drive their folders. A imports B when
#   - one of A's files includes one of B's ("#include", resolved as the
#     compiler does: the including file's folder first, then the Makefile's
#     INCLUDES), or
#   - A's object uses a function or variable that B's object defines: the
#     undefined symbols of $BUILD/host/obj/A.o (or musl/obj/A.o for a
#     program built only for the images) against the defined ones of
#     every other object (nm). A symbol two programs both define (each its own
#     main, say) goes to the one whose folder is nearest the caller's.
# A cycle is a set of modules each reachable from every other (a strongly
# connected component of two or more): each is one result naming a shortest
# circle through it, every import inside it listed below as a comment.
#
# Cycles outside executor/ and lib/ that another branch is breaking may be
# listed in KNOWN (exact member sets) with a TODO: they are reported as skips,
# named in the harness's summary, until the entry is removed; an entry that
# matches no cycle any more fails, so the list cannot outlive its cycles.
#
# Needs `make all` (the host objects; one older than its source fails here).
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOTS = ("lib", "executor", "builder", "aggregator")
KNOWN = [
    # Cycles known and left for later, each as the exact set of its members
    # with who is to break it; none today.
]


class Tap:
    def __init__(self):
        self.count = 0

    def result(self, good, text, directive=""):
        self.count += 1
        line = "%s %d - %s" % ("ok" if good else "not ok", self.count, text)
        print(line + (" # " + directive if directive else ""))

    def diag(self, text):
        for line in text.splitlines():
            print("# " + line)

    def done(self):
        print("1..%d" % self.count)


def include_dirs(src):
    """The -I folders of the Makefile's INCLUDES, in order."""
    with open(os.path.join(src, "Makefile")) as f:
        for line in f:
            m = re.match(r"^INCLUDES\s*:?=\s*(.*)$", line)
            if m:
                return [w[2:] for w in m.group(1).split() if w.startswith("-I")]
    raise SystemExit("import-cycles: no INCLUDES line in %s/Makefile" % src)


def sources(src, roots):
    files = []
    for root in roots:
        for folder, dirs, names in os.walk(os.path.join(src, root)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(folder, name), src))
    return files


class Graph:
    """Modules and their imports; every edge keeps one reason to show."""

    def __init__(self, files):
        self.files = set(files)
        self.edges = collections.defaultdict(dict)
        self.modules = set(self.module(f) for f in files)

    def module(self, path):
        stem, ext = os.path.splitext(path)
        if ext == ".h" and stem + ".c" in self.files:
            return stem + ".c"
        return path

    def add(self, a, b, why):
        a, b = self.module(a), self.module(b)
        if a != b:
            self.edges[a].setdefault(b, why)


def add_includes(graph, src, files, incdirs):
    pattern = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for f in files:
        with open(os.path.join(src, f), errors="replace") as text:
            for number, line in enumerate(text, 1):
                m = pattern.match(line)
                if not m:
                    continue
                name = m.group(1)
                candidates = [os.path.dirname(f)] + incdirs
                for folder in candidates:
                    target = os.path.normpath(os.path.join(folder, name))
                    if target in graph.files:
                        graph.add(f, target, "%s:%d includes \"%s\"" % (f, number, name))
                        break


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        if fields[1] == "U":
            undefined.add(fields[0])
        elif fields[1] in "BCDGRSTVWi":
            defined.add(fields[0])
    return defined, undefined


def nearest(caller, candidates):
    """The candidates sharing the longest folder prefix with the caller."""
    def shared(path):
        a, b = os.path.dirname(caller).split("/"), os.path.dirname(path).split("/")
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n
    best = max(shared(c) for c in candidates)
    return sorted(c for c in candidates if shared(c) == best)


def add_calls(graph, objdir, files):
    """Objects of the .c files; returns the sources without an up-to-date one."""
    problems = []
    defined_by = collections.defaultdict(list)
    undefined = {}
    for f in files:
        if not f.endswith(".c"):
            continue
        obj = os.path.join(objdir, f[:-2] + ".o")
        # A program built for the images only (bootci-collect's main.c) has
        # its musl object and no host one: the same symbols.
        musl = os.path.join(os.path.dirname(objdir.rstrip("/")), "..", "musl", "obj", f[:-2] + ".o")
        if not os.path.exists(obj) and os.path.exists(musl):
            obj = os.path.normpath(musl)
        if not os.path.exists(obj):
            problems.append("%s: no object %s" % (f, obj))
            continue
        if os.path.getmtime(obj) < os.path.getmtime(os.path.join(graph.src, f)):
            problems.append("%s: its object %s is older than it" % (f, obj))
        defs, undefs = symbols(obj)
        for name in defs:
            defined_by[name].append(f)
        undefined[f] = undefs
    for f, undefs in sorted(undefined.items()):
        for name in sorted(undefs):
            if name not in defined_by:
                continue
            for target in nearest(f, defined_by[name]):
                graph.add(f, target, "%s uses %s of %s" % (f, name, target))
    return problems


def build_graph(src, roots, incdirs, objdir):
    files = sources(src, roots)
    graph = Graph(files)
    graph.src = src
    add_includes(graph, src, files, incdirs)
    problems = add_calls(graph, objdir, files)
    return graph, problems


def cycles(graph):
    """The strongly connected components of two or more modules (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    nodes = sorted(set(graph.edges) | {b for e in graph.edges.values() for b in e})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.edges.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.edges.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def shortest_circle(graph, component):
    """A shortest path from the component's first member back to itself."""
    members = set(component)
    start = component[0]
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.edges.get(node, {})):
            if child not in members:
                continue
            if child == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return component + [start]


def describe(graph, component):
    lines = []
    members = set(component)
    for a in component:
        for b, why in sorted(graph.edges.get(a, {}).items()):
            if b in members:
                lines.append("%s -> %s: %s" % (a, b, why))
    return "\n".join(lines)


def self_test(tap):
    """The check on a small tree of its own: it must find the one circle there is."""
    with tempfile.TemporaryDirectory() as work:
        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(work, path)), exist_ok=True)
            with open(os.path.join(work, path), "w") as f:
                f.write(text)
        # top.c calls part.c; part.c includes shared.h (no .c of its own: no cycle);
        # log.c includes clock.h for a type, clock.c calls log.c: a cycle.
        write("Makefile", "INCLUDES := -Ilib\n")
        write("lib/shared.h", "struct shared { int x; };\nint part(struct shared *s);\n")
        write("lib/part.c", '#include "shared.h"\nint part(struct shared *s) { return s->x; }\n')
        write("lib/top.c", '#include "shared.h"\nint top(void);\n'
              "int top(void) { struct shared s = { 1 }; return part(&s); }\n")
        write("lib/clock.h", "struct clock { long ns; };\nlong clock_now(void);\n")
        write("lib/clock.c", '#include "clock.h"\nvoid log_say(void);\n'
              "long clock_now(void) { log_say(); return 0; }\n")
        write("lib/log.h", "void log_say(void);\n")
        write("lib/log.c", '#include "log.h"\n#include "clock.h"\n'
              "void log_say(void) { struct clock c = { 0 }; (void)c; }\n")
        for name in ("part", "top", "clock", "log"):
            os.makedirs(os.path.join(work, "obj/lib"), exist_ok=True)
            subprocess.run(["cc", "-c", "-Ilib", "-o", "obj/lib/%s.o" % name, "lib/%s.c" % name],
                           cwd=work, check=True)
        graph, problems = build_graph(work, ("lib",), ["lib"], os.path.join(work, "obj"))
        found = cycles(graph)
        want = [["lib/clock.c", "lib/log.c"]]
        tap.result(found == want and not problems,
                   "on a sample tree: a cycle of an include and a call is found, a shared "
                   "header makes none")
        if found != want or problems:
            tap.diag("found %s, wanted %s; %s" % (found, want, problems))


def main():
    src = os.environ.get("SRC") or sys.exit("import-cycles: SRC is not set")
    build = os.environ.get("BUILD") or sys.exit("import-cycles: BUILD is not set")
    tap = Tap()
    self_test(tap)
    graph, problems = build_graph(src, ROOTS, include_dirs(src), os.path.join(build, "host/obj"))
    tap.result(not problems, "every .c of %s/ has an up-to-date object in $BUILD/host/obj "
               "(make all)" % "/ ".join(ROOTS))
    tap.diag("\n".join(problems))
    found = cycles(graph)
    matched = set()
    for component in found:
        circle = " -> ".join(shortest_circle(graph, component))
        known = [i for i, (members, _) in enumerate(KNOWN) if members == set(component)]
        if known and not any(m.startswith(("executor/", "lib/")) for m in component):
            matched.add(known[0])
            tap.result(True, "import cycle (%d modules): %s" % (len(component), circle),
                       "SKIP TODO(lead): left to %s" % KNOWN[known[0]][1])
        else:
            tap.result(False, "import cycle (%d modules): %s" % (len(component), circle))
        tap.diag(describe(graph, component))
    for i, (members, who) in enumerate(KNOWN):
        if i not in matched:
            tap.result(False, "KNOWN lists a cycle there is not (any more): %s (%s); remove it"
                       % (" ".join(sorted(members)), who))
    tap.result(True, "%d modules, %d imports, %d cycles" %
               (len(graph.modules), sum(len(e) for e in graph.edges.values()), len(found)))
    tap.done()


main()

#!/usr/bin/python3
# IGT's strings have one home, lib/igt_output_strings.h (as IGT keeps its
# runner's in runner/output_strings.h): no other C file of lib/, executor/,
# builder/ or aggregator/ spells one of them in a string literal of its own;
# they use the names. The result words (SUCCESS, FAIL, ...) and the packet
# types' names are left out: as bare words they are also the report's labels;
# a short string ("exit:") counts only at the start of a literal, where a
# line of its format would begin ("cannot set a timeout: %s" is no journal).
# tests/fixtures/ stand in for IGT and spell them on purpose.
import os
import re
import sys

ROOTS = ("lib", "executor", "builder", "aggregator")
HEADER = "lib/igt_output_strings.h"
LEFT_OUT = re.compile(r"^BCI_IGT_(WORD_|PACKET_NAMES$)")


def literals(text):
    """The string literals of C source @text, adjacent ones joined, as written (escapes kept)."""
    out, i, n = [], 0, len(text)
    joining = False
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "'":
            i += 1
            while i < n and text[i] != "'":
                i += 2 if text[i] == "\\" else 1
            i += 1
            joining = False
        elif c == '"':
            i += 1
            start = i
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if joining:
                out[-1] += text[start:i]
            else:
                out.append(text[start:i])
            joining = True
            i += 1
        elif c.isspace() or c == "\\":
            i += 1
        else:
            joining = False
            i += 1
    return out


def spelled(value, literal):
    """Whether @literal spells @value: a short one (exit:) as its start, a longer anywhere."""
    return literal.startswith(value) if len(value) < 10 else value in literal


def main():
    src = os.environ.get("SRC") or sys.exit("igt-strings: SRC is not set")
    with open(os.path.join(src, HEADER)) as f:
        header = f.read()
    names = {}
    for m in re.finditer(r"^#define\s+(BCI_IGT_\w+)\s+((?:.*\\\n)*.*)$", header, re.M):
        name, body = m.group(1), m.group(2)
        if LEFT_OUT.match(name):
            continue
        joined = "".join(literals(body))
        if joined:
            names[name] = joined
    count = 0

    def result(good, text):
        nonlocal count
        count += 1
        print("%s %d - %s" % ("ok" if good else "not ok", count, text))

    result(len(names) >= 10, "%s defines %d strings to look for" % (HEADER, len(names)))
    for name, value in sorted(names.items()):
        found = []
        for root in ROOTS:
            for folder, dirs, files in os.walk(os.path.join(src, root)):
                dirs.sort()
                for file in sorted(files):
                    path = os.path.relpath(os.path.join(folder, file), src)
                    if not file.endswith((".c", ".h")) or path == HEADER:
                        continue
                    with open(os.path.join(src, path), errors="replace") as f:
                        if any(spelled(value, lit) for lit in literals(f.read())):
                            found.append(path)
        result(not found, "%s is spelled only in %s%s" %
               (name, HEADER, "; also in " + ", ".join(found) if found else ""))
    print("1..%d" % count)


main()

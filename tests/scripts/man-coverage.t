#!/usr/bin/python3
"""Every command, option, configuration key and environment variable the
programs take is in a man page ($BUILD/man/, built by install.mk).

What the programs take comes from two places, so that neither can drift alone:
- their own help: each program's --help (bootci-aggregator's, block by block:
  a command's options must be in its page bootci-aggregator-CMD(1); serve's own
  --help), bootci-executor --help-config (the executor's keys) and
  bootci-collect --help (collect's keys);
- the code: every getopt_long option table and short-option string, and the
  key tables of the file formats a user writes (collect's machine file, the
  master's inventory, known-issue filters, the builder's recipes and specs,
  the deploy plan), found by what defines them rather than by path, and every
  getenv() name.
A test fails naming each item no page mentions, and a source that yields no
items at all fails too (the extraction would be out of date)."""
import os
import re
import subprocess
import sys

BUILD = os.environ["BUILD"]
SRC = os.environ["SRC"]
MAN = os.path.join(BUILD, "man")
BIN = os.path.join(BUILD, "host", "bin")
# The programs built only static musl, for the images (bootci-collect), are in musl/bin.
MUSL_BIN = os.path.join(BUILD, "musl", "bin")


def program_path(name):
    """Where the built program NAME is: the host build, else the musl one."""
    host = os.path.join(BIN, name)
    return host if os.path.exists(host) else os.path.join(MUSL_BIN, name)

count = 0


def tap(good, description, diag=()):
    global count
    count += 1
    print(("ok" if good else "not ok"), count, "-", description)
    for line in diag:
        print("#", line)
    return good


def page_text(path):
    """A built page's roff as text: font changes and escapes removed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", text)
    return text.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\").replace("\\(aq", "'")


pages = {}
if os.path.isdir(MAN):
    for name in sorted(os.listdir(MAN)):
        if re.fullmatch(r"[a-z0-9.-]+\.[158]", name):
            pages[name] = page_text(os.path.join(MAN, name))


def pattern(item):
    """A word as a whole: --store is not in --store-url, -o not in --output, run_id not in run_ids."""
    return re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(item) + r"(?![A-Za-z0-9_-])")


def program_pages(program):
    """The pages of sections 1 and 8 of a program: its own and its commands'."""
    return [p for p in pages if p.rsplit(".", 1)[1] in "18" and
            (p.rsplit(".", 1)[0] == program or p.startswith(program + "-"))]


def expect(description, items, where, anywhere=False):
    """One result: every item of @items is mentioned in one of the pages @where."""
    items = sorted(set(items))
    if not items:
        return tap(False, description + ": nothing found to check (the extraction is out of date)")
    if not anywhere and not all(p in pages for p in where):
        return tap(False, description, ["no such page: " + ", ".join(p for p in where if p not in pages)])
    texts = [pages[p] for p in where if p in pages]
    missing = [i for i in items if not any(pattern(i).search(t) for t in texts)]
    shown = "any page" if anywhere else ", ".join(where) if len(where) <= 2 else \
        "its %d pages (%s ...)" % (len(where), where[0])
    return tap(not missing, "%s: %d in %s" % (description, len(items), shown),
               ["missing: %s" % i for i in missing])


def run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    return r.stdout + r.stderr


def options_in(text):
    return re.findall(r"(?<![A-Za-z0-9_-])(--[a-z][a-z0-9-]*)", text)


def sources(top_dirs, suffix=".c"):
    for top in top_dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "man")
            for name in sorted(filenames):
                if name.endswith(suffix):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        yield os.path.relpath(path, SRC), f.read()


CODE = list(sources(["aggregator", "executor", "builder", "lib"]))


def defining(marker):
    """The source files whose text holds @marker (a table or a function's definition)."""
    return [(path, text) for path, text in CODE if marker.search(text)]


def table_names(text, start):
    """The first strings of the entries of the array whose definition matches @start."""
    m = re.search(start + r"[^{]*\{(.*?)\n\};", text, re.S)
    return re.findall(r'\{\s*"([^"]+)"', m.group(1)) if m else []


# ---- the matcher itself can fail ----
fake = "*--store-url* and --output, run_ids"
tap(not any(pattern(i).search(fake) for i in ["--store", "-o", "run_id"]) and
    pattern("--output").search(fake) is not None,
    "the matcher takes whole words only (--store is not in --store-url, -o not in --output)")

# ---- every program has its page ----
programs = sorted(set(n for d in (BIN, MUSL_BIN) if os.path.isdir(d)
                      for n in os.listdir(d) if n.startswith("bootci-")))
tap(bool(programs) and all(program_pages(p) and any(q.rsplit(".", 1)[0] == p for q in pages)
                           for p in programs),
    "every program of $BUILD/host/bin and musl/bin has its page: " + " ".join(programs),
    ["no page: " + p for p in programs if not any(q.rsplit(".", 1)[0] == p for q in pages)])

# ---- bootci-aggregator: each command's block of --help, in its page ----
agg = os.path.join(BIN, "bootci-aggregator")
blocks = {}
current = None
for line in run([agg, "--help"]).splitlines():
    m = re.match(r"\s{0,2}([a-z]+) ", line)
    if m and not line.startswith("      ") and m.group(1) != "usage":
        current = m.group(1)
    if current:
        blocks[current] = blocks.get(current, "") + line + "\n"
tap(len(blocks) >= 10, "bootci-aggregator --help lists its commands: " + " ".join(sorted(blocks)))
for command, block in sorted(blocks.items()):
    page = "bootci-aggregator-%s.1" % command
    if command == "serve":
        block += run([agg, "serve", "--help"])
    words = options_in(block)
    # Verbs, from the usage lines (a description line starts with six blanks):
    # `schedule machines | schedule jobs`, `machine tag|untag`, `export kcidb`.
    usage = "\n".join(l for l in block.splitlines() if not re.match(r" {6}\S", l))
    for verbs in re.findall(r"\b%s ((?:[a-z][a-z-]*\|?)+)(?![A-Za-z_])" % command, usage):
        words += verbs.split("|")
    words += re.findall(r"(?<![A-Za-z0-9-])(-[a-zA-Z])(?![A-Za-z0-9-])", block)
    expect("bootci-aggregator %s (its --help)" % command, words + [command], [page])

# ---- the other programs' --help ----
helps = {
    "bootci-builder": ["--help"],
    "bootci-collect": ["--help"],
    "bootci-efi": ["--help"],
    "bootci-executor": ["--help"],
    "bootci-results": ["--help"],
}
for program, args in sorted(helps.items()):
    text = run([program_path(program)] + args)
    words = options_in(text) + re.findall(r"(?<![A-Za-z0-9-])(-[a-zA-Z])(?![A-Za-z0-9-])", text)
    # Commands: `bootci-builder initramfs ...`, `bootci-efi [--root DIR] list`.
    words += re.findall(r"%s (?:\[--root DIR\] )?([a-z][a-z-]+)" % program, text)
    expect("%s --help: its options and commands" % program, words,
           [p for p in program_pages(program) if p.rsplit(".", 1)[0] == program])

# ---- configuration keys from the programs' help ----
keys = [line.split()[0] for line in run([program_path("bootci-executor"), "--help-config"]).splitlines()
        if line.strip()]
expect("bootci-executor --help-config: the executor's keys", keys, ["bootci-executor.conf.5"])
collect_help = run([program_path("bootci-collect"), "--help"])
keys = re.findall(r"^  ([a-z_]+)\s", collect_help.split("Settings:", 1)[-1], re.M)
expect("bootci-collect --help: collect's keys", keys, ["bootci-collect.conf.5"])

# ---- the code: every getopt_long table and short-option string ----
def code_program(path, text):
    if path.startswith("aggregator/master/"):
        return ["bootci-aggregator"]
    if path.startswith("aggregator/collect/"):
        return ["bootci-collect"]
    if path.startswith("aggregator/results/"):
        return ["bootci-results", "bootci-aggregator-results"]
    if path.startswith("builder/"):
        return ["bootci-builder"]
    if path.startswith("executor/"):
        return ["bootci-efi"] if "usage: bootci-efi" in text else ["bootci-executor"]
    return []


tables = 0
for path, text in CODE:
    if not re.search(r"struct option \w+\[\] = \{", text):
        continue
    tables += 1
    program = code_program(path, text)
    if not tap(bool(program), "%s: an option table of a known program" % path):
        continue
    where = sorted(set(p for prog in program for p in program_pages(prog)))
    longs = []
    for body in re.findall(r"struct option \w+\[\] = \{(.*?)\n\s*\};", text, re.S):
        longs += ["--" + n for n in re.findall(r'\{\s*"([a-z][a-z0-9-]*)"', body)]
    shorts = []
    for optstring in re.findall(r'getopt_long\(\s*argc,\s*argv,\s*"([^"]*)"', text):
        shorts += ["-" + c for c in optstring if c.isalnum()]
    expect("%s: its long and short options (getopt_long)" % path, longs + shorts, where)
tap(tables >= 8, "option tables found in the code: %d" % tables)

# ---- the code: key tables of the file formats a user writes ----
def strcmp_keys(text, var="key"):
    return re.findall(r'strcmp\(%s, "([^"]+)"\)' % var, text)


formats = [
    ("collect.conf keys (bci_collect_keys)", re.compile(r"bci_collect_keys\[\] = \{"),
     lambda t: table_names(t, r"bci_collect_keys\[\] ="), "bootci-collect.conf.5"),
    ("the machine file's keys (machine_keys)", re.compile(r"machine_keys\[\] = \{"),
     lambda t: table_names(t, r"machine_keys\[\] ="), "bootci-machine.conf.5"),
    ("the executor's keys (bci_executor_keys)", re.compile(r"bci_executor_keys\[\] = \{"),
     lambda t: table_names(t, r"bci_executor_keys\[\] ="), "bootci-executor.conf.5"),
    ("the inventory's sections and keys (bci_inventory_parse)",
     re.compile(r"^int bci_inventory_parse\(", re.M),
     lambda t: strcmp_keys(t) + ["[%s" % s for s in strcmp_keys(t, "line")], "bootci-machines.conf.5"),
    ("patchwork.conf's keys (bci_patchwork_config_parse)",
     re.compile(r"^int bci_patchwork_config_parse\(", re.M), strcmp_keys, "bootci-patchwork.conf.5"),
    ("known-issue filter keys (filters)", re.compile(r'#define FILTERS_MAGIC "'),
     lambda t: strcmp_keys(t) + re.findall(r'#define FILTERS_MAGIC "([^"]+)"', t) +
     re.findall(r'"([a-z]+)"', (re.search(r"log_names\[[^]]*\] = \{([^}]*)\}", t) or re.search("()", "")).group(1)),
     "bootci-known-issues.5"),
    ("the master's mail.conf keys (mail_keys)", re.compile(r"mail_keys\[\] = \{"),
     lambda t: table_names(t, r"mail_keys\[\] ="), "bootci-mail.conf.5"),
    ("recipe keys (builder_recipe_parse)", re.compile(r"^int builder_recipe_parse\(", re.M),
     strcmp_keys, "bootci-recipe.5"),
    ("spec directives (spec_directives)", re.compile(r"spec_directives\[\] = \{"),
     lambda t: table_names(t, r"spec_directives\[\] ="), "bootci-cpio-spec.5"),
    ("deploy plan keys (the deploy plan's reader)", re.compile(r"^int bci_deploy_plan_parse\(", re.M),
     lambda t: re.findall(r'"([a-z0-9_]+)"', (re.search(r"key_names\[[^]]*\] = \{([^}]*)\}", t) or
                                             re.search("()", "")).group(1)), "bootci-executor.8"),
]
for description, marker, extract, page in formats:
    found = defining(marker)
    if not tap(len(found) == 1, "%s: defined in one file (%s)" % (description, ", ".join(p for p, _ in found))):
        continue
    expect("%s, %s" % (description, found[0][0]), extract(found[0][1]), [page])

# ---- the code: environment variables ----
names = []
for path, text in CODE:
    names += re.findall(r'getenv\("([A-Z_][A-Z0-9_]*)"\)', text)
# PATH is every program's; it is named where it matters (sendmail, depmod).
expect("getenv() names in the code (but PATH)", [n for n in names if n != "PATH"], list(pages), anywhere=True)

print("1..%d" % count)

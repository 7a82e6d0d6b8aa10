#!/usr/bin/python3
"""Bench: noise against the report and its reruns (issue 37, "noise kills any test system").

A lab of GROUPS shard groups of MACHINES duplicate machines each, TESTS tests
a run, FLAKY tests of each group failing one run in RATE^-1 on every machine
of it (1 in 50 tests always skip, 1 in 200 always fail: unchanged, never
reported). The base tree gets a build a round; after each, a clean series
(changes nothing) and a regressed one (REGRESSIONS stable tests of each group
fail on every machine of it) are built on it. Every run is written by this
generator as an igt_runner results folder, ingested for real (`bootci-
aggregator ingest`, SQLite store).

Each series then gets what the master gives it before its reply: it is
reported for real (`report --mbox`, baseline --window WINDOW); when the reply
has possible new issues, `schedule confirm SERIES` queues their reruns as the
gate does (RERUNS times, the inventory's `reruns`, default 3: on each machine
where they appeared, plus another of its shard group when only one showed
them); each rerun job it prints is run by this generator, its tests only, each
test as the lab's truth makes it (a flaky one fails with its RATE, a real
regression always, the others as ever), and ingested under the job's machine
and run id for the series; the series is reported again. The final reply's
possible new issues are read back and sorted into the regressions the series
really has and the flakes it does not. `schedule confirm` judges with the
report's default window (5 runs): with another --window it plans the reruns
for what it finds, which the bench then no longer checks against its own
first reply.

Both sides run in the same run on copies of the same store, each with its own
inventory (DATA/machines.conf, one unique MAC a machine): the group side (the
machines in their shard groups in the store, `machine group`, and in the
inventory, `shard-group`) and its peer, the machine-only side (the same
machines, out of their groups in the store, `machine ungroup`, and in the
inventory, no `shard-group`: the report judges each machine on its own
baseline, as it did before groups, and the reruns of its possible new issues
run on it alone, as the master reruns a machine of no group; the same RERUNS).
Printed for each, before the reruns and after: false possible new issues per
clean build (issue 37's target: at most 1 per 10 clean builds), real
regressions missed (target: none), flaky tests named as flaky, the reports'
wall time (the two sides reported in turn, REPEAT times each, the median);
and what the reruns cost: rerun jobs and the test runs in them per series.

usage: tests/bench/report-noise.py [BUILD_DIR] [--groups N] [--machines N] [--tests N]
       [--flaky N] [--rate P] [--regressions N] [--window N] [--rounds N] [--seed N]
       [--reruns N] [--repeat N] [--keep DIR]
       (make bench runs it with the defaults: the issue's lab, three times over, 3 reruns)
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

EXIT = {"pass": 0, "fail": 1, "skip": 77}
VERDICT = {"pass": "SUCCESS", "fail": "FAIL", "skip": "SKIP"}
T0 = 1764000000
JUDGE_WINDOW = 5  # the window `schedule confirm` judges with (the report's default)
SIDES = ("group", "machine")


def test_name(j):
    return f"igt@noise_{j % 50:02d}@sub-{j}"


def plain_status(j):
    """What test j does when nothing is wrong: most pass, some always skip or fail."""
    return "skip" if j % 50 == 7 else "fail" if j % 200 == 3 else "pass"


class RunFolder:
    """One machine's run folder of the given tests, rewritten in place: only the jobs whose
    status changed."""

    def __init__(self, path, tests):
        self.path = path
        self.tests = tests
        self.status = [None] * len(tests)
        os.makedirs(path)
        with open(os.path.join(path, "joblist.txt"), "w") as f:
            f.writelines(f"noise_{j % 50:02d} sub-{j}\n" for j in tests)
        for name, text in (("starttime.txt", f"{T0}.0\n"), ("endtime.txt", f"{T0 + 3600}.0\n"),
                           ("uname.txt", "Linux lab 6.12.0 #1 SMP x86_64\n")):
            with open(os.path.join(path, name), "w") as f:
                f.write(text)
        for k in range(len(tests)):
            os.mkdir(os.path.join(path, str(k)))
            open(os.path.join(path, str(k), "err.txt"), "w").close()

    def write(self, run_id, statuses):
        with open(os.path.join(self.path, "metadata.txt"), "w") as f:
            f.write(f"abort_mask : 0\nname : {run_id}\ndmesg_warn_level : 4\n")
        for k, (j, status) in enumerate(zip(self.tests, statuses)):
            if self.status[k] == status:
                continue
            self.status[k] = status
            job = os.path.join(self.path, str(k))
            binary, sub = f"noise_{j % 50:02d}", f"sub-{j}"
            with open(os.path.join(job, "out.txt"), "w") as f:
                f.write(f"IGT-Version: 1.30 (x86_64) (Linux: 6.12.0 x86_64)\n"
                        f"Starting subtest: {sub}\nSubtest {sub}: {VERDICT[status]} (0.010s)\n")
            with open(os.path.join(job, "journal.txt"), "w") as f:
                f.write(f"{sub}\nexit:{EXIT[status]} (0.020s)\n")
            with open(os.path.join(job, "dmesg.txt"), "w") as f:
                f.write(f"14,{3 * j},{1000000 + j},-;[IGT] {binary}: starting subtest {sub}\n"
                        f"14,{3 * j + 1},{1000100 + j},-;[IGT] {binary}: exiting, ret={EXIT[status]}\n")


def reply_entries(text, section):
    """(test, machine, line) of each machine in the reply's section, its wrapped lines joined."""
    start = text.find(f"\n== {section} ==\n")
    if start < 0:
        return []
    end = text.find("\n== ", start + 1)
    body = text[start:end if end > 0 else len(text)]
    entries, test, line = [], None, None

    def flush():
        if test and line:
            machines, _, rest = line.partition(": [")
            for m in machines.split(", "):
                entries.append((test, m.strip(), "[" + rest))

    for raw in body.split("\n"):
        item = re.fullmatch(r"  \* (\S+):", raw)
        if item or raw.startswith("    - ") or not raw.startswith("      "):
            flush()
            line = None
        if item:
            test = item.group(1)
        elif raw.startswith("    - "):
            line = raw[6:]
        elif raw.startswith("      ") and line is not None and "://" not in raw:
            line += " " + raw.strip()
    flush()
    return entries


def confirm_jobs(out, build):
    """The rerun jobs `schedule confirm BUILD` printed: [(machine, run id, [test index])]."""
    jobs, job = [], None
    head = re.compile(rf"(\S+) +({re.escape(build)}-confirm-\d+) +{re.escape(build)} +confirm"
                      r" +1/1 +queued +0")
    for line in out.split("\n"):
        m = head.fullmatch(line.rstrip())
        if m:
            job = (m.group(1), m.group(2), [])
            jobs.append(job)
        elif job and line.startswith("    "):
            test = re.fullmatch(r"igt@noise_\d\d@sub-(\d+)", line[4:])
            if not test or test_name(int(test.group(1))) != line[4:]:
                sys.exit(f"report-noise: {build}: schedule confirm printed a test the lab does"
                         f" not run: {line!r}")
            job[2].append(int(test.group(1)))
        else:
            job = None
    if any(not tests for _, _, tests in jobs):
        sys.exit(f"report-noise: {build}: schedule confirm printed a rerun job without tests")
    return jobs


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--groups", type=int, default=3)
    parser.add_argument("--machines", type=int, default=3)
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--flaky", type=int, default=30)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--regressions", type=int, default=3)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--reruns", type=int)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep")
    a = parser.parse_args()
    stable = [j for j in range(a.tests) if plain_status(j) == "pass"]
    if not (1 <= a.groups <= 26 and 1 <= a.machines <= 50 and 1 <= a.window <= 100 and
            1 <= a.rounds <= 1000 and 1 <= a.repeat <= 20 and 0 < a.rate < 1 and
            a.flaky + a.regressions <= len(stable) and (a.reruns is None or 0 <= a.reruns <= 10)):
        sys.exit("report-noise: a parameter out of range (see --help)")
    reruns = 3 if a.reruns is None else a.reruns
    aggregator = os.path.join(os.path.realpath(a.build), "host", "bin", "bootci-aggregator")
    rng = random.Random(a.seed)
    groups = {f"grp-{chr(97 + g)}": [f"grp-{chr(97 + g)}-{k + 1}" for k in range(a.machines)]
              for g in range(a.groups)}
    group_of = {m: g for g, ms in groups.items() for m in ms}
    flaky = {g: set(rng.sample(stable, a.flaky)) for g in groups}
    if a.keep:
        shutil.rmtree(a.keep, ignore_errors=True)
        os.makedirs(a.keep)
        work = os.path.realpath(a.keep)
    else:
        work = tempfile.mkdtemp(prefix="report-noise.")
    scratch_parent = "/dev/shm" if os.access("/dev/shm", os.W_OK) else work
    scratch = tempfile.mkdtemp(prefix="report-noise.", dir=scratch_parent)
    data = {mode: os.path.join(work, f"data-{mode}") for mode in ("lab", "group", "machine")}
    started = time.monotonic()

    def agg(mode, *args):
        return subprocess.run([aggregator, *args, "--data", data[mode]], check=True,
                              stdout=subprocess.PIPE, text=True).stdout

    def status(j, g, regressed):
        """Test j on a machine of group g, as the lab's truth makes it this time."""
        if regressed and j in regressed[g]:
            return "fail"
        if j in flaky[g] and rng.random() < a.rate:
            return "fail"
        return plain_status(j)

    try:
        folders = {m: RunFolder(os.path.join(scratch, m), list(range(a.tests))) for m in group_of}
        runs = 0
        regressed_of = {}  # series -> {group: {test index}} (None: clean)
        regressions = {}  # series -> {(test, machine)}

        def run_build(build, regressed=None):
            nonlocal runs
            for g, machines in groups.items():
                for m in machines:
                    folders[m].write(f"{build}-{m}",
                                     [status(j, g, regressed) for j in range(a.tests)])
                    agg("lab", "ingest", "--machine", m, "--run-id", f"{build}-{m}", "--build",
                        build, folders[m].path)
                    runs += 1

        for m, g in group_of.items():
            agg("lab", "machine", "group", m, g)
        print(f"report-noise: generating and ingesting {a.window + a.rounds - 1} base builds and"
              f" {2 * a.rounds} series on {a.groups * a.machines} machines", file=sys.stderr)
        series = []
        for i in range(1, a.window + a.rounds):
            tip = f"tip-{i}"
            agg("lab", "build", "add", tip, "--tree", "drm-tip", "--commit", f"{i:07x}",
                "--tier", "fast", "--registered", str(T0 + 1000 * i))
            run_build(tip)
            if i < a.window:
                continue
            for kind, offset in (("clean", 100), ("regressed", 200)):
                name = f"{kind}-{i - a.window + 1}"
                agg("lab", "build", "add", name, "--tree", "series", "--commit", f"{i:07x}",
                    "--tier", "fast", "--base", tip, "--series-title", name, "--registered",
                    str(T0 + 1000 * i + offset))
                regressed = None
                if kind == "regressed":
                    regressed = {g: set(rng.sample([j for j in stable if j not in flaky[g]],
                                                   a.regressions)) for g in groups}
                regressed_of[name] = regressed
                regressions[name] = {(test_name(j), m) for g, ms in groups.items() for m in ms
                                     for j in (regressed or {}).get(g, ())}
                run_build(name, regressed)
                series.append(name)
        generated = time.monotonic() - started

        # A side's store: the lab's copied (its runs' files linked), then its machines put in
        # their groups or out of them, so that both stores are in the same state (a store
        # written to last by the 576 ingests reads slower than one written to since).
        # Each side's inventory: a MAC a machine, its group on the group side.
        def link_or_copy(source, target):
            if os.path.basename(source).startswith("bootci.sqlite"):
                return shutil.copy2(source, target)
            return os.link(source, target)

        for mode in SIDES:
            shutil.copytree(data["lab"], data[mode], copy_function=link_or_copy,
                            ignore=shutil.ignore_patterns("*-shm"))
            for m, g in group_of.items():
                agg(mode, "machine", *(("group", m, g) if mode == "group" else ("ungroup", m)))
        shutil.rmtree(data["lab"])
        for mode in SIDES:
            with open(os.path.join(data[mode], "machines.conf"), "w") as f:
                if a.reruns is not None:
                    f.write(f"[schedule]\nreruns = {a.reruns}\n\n")
                for n, (m, g) in enumerate(group_of.items()):
                    f.write(f"[machine {m}]\nmac = 02:00:00:00:{n >> 8:02x}:{n & 255:02x}\n")
                    f.write(f"shard-group = {g}\n\n" if mode == "group" else "\n")

        def report_all(mode, stage):
            figures = {"false": 0, "false_tests": 0, "false_regressed": 0, "missed": 0,
                       "named": 0, "confirmed": 0, "unconfirmed": 0, "flaky": 0,
                       "flaky_failed": 0, "flaky_runs": 0, "flaky_reruns": 0,
                       "flaky_reruns_passed": 0, "flaky_reruns_runs": 0, "wall": 0.0}
            new_of = {}
            for name in series:
                mbox = os.path.join(work, f"{mode}-{stage}-{name}.mbox")
                start = time.monotonic()
                out = agg(mode, "report", "--build", name, "--window", str(a.window), "--mbox",
                          mbox, "--fold", "1000000", "--date", str(T0))
                figures["wall"] += time.monotonic() - start
                with open(mbox, encoding="utf-8") as f:
                    text = f.read()
                entries = reply_entries(text, "Possible new issues")
                new = {(t, m) for t, m, _ in entries}
                said = re.search(r": (\d+) possible new issues,", out)
                if not said or int(said.group(1)) != len(new):
                    sys.exit(f"report-noise: {name}: the reply names {len(new)} possible new"
                             f" issues, the report says {out.strip()}")
                new_of[name] = new
                figures["confirmed"] += sum("(confirmed: failed " in line for _, _, line in entries)
                figures["unconfirmed"] += sum("(unconfirmed: " in line for _, _, line in entries)
                real = regressions[name]
                false = new - real
                if name.startswith("clean"):
                    figures["false"] += len(false)
                    figures["false_tests"] += len({t for t, _ in false})
                else:
                    figures["false_regressed"] += len(false)
                figures["missed"] += len(real - new)
                figures["named"] += len(real & new)
                for _, _, line in reply_entries(text, "Flaky tests"):
                    rate = re.search(r"\(flaky: failed (\d+) of (\d+) runs on ", line)
                    rerun = re.search(r"\(flaky: passed (\d+) of (\d+) reruns\)", line)
                    if not rate and not rerun:
                        sys.exit(f"report-noise: {name}: a flaky line without its rate: {line}")
                    figures["flaky"] += 1
                    if rate:
                        figures["flaky_failed"] += int(rate.group(1))
                        figures["flaky_runs"] += int(rate.group(2))
                    else:
                        figures["flaky_reruns"] += 1
                        figures["flaky_reruns_passed"] += int(rerun.group(1))
                        figures["flaky_reruns_runs"] += int(rerun.group(2))
            return figures, new_of

        # The two sides in turn, a.repeat times each: the host's load moves. Their verdicts
        # must be the same every time; their wall time is the median.
        def passes(stage):
            done = {mode: [] for mode in SIDES}
            for _ in range(a.repeat):
                for mode in done:
                    done[mode].append(report_all(mode, stage))
            result = {}
            for mode, reports in done.items():
                figures = [f for f, _ in reports]
                walls = sorted(f.pop("wall") for f in figures)
                if any(f != figures[0] for f in figures):
                    sys.exit(f"report-noise: the {mode} side's reports ({stage} the reruns) differ"
                             f" between passes")
                figures[0]["wall"] = walls[len(walls) // 2]
                figures[0]["walls"] = walls
                result[mode] = figures[0], reports[0][1]
            return result

        before = passes("before")

        # The master's reruns: those `schedule confirm` queues, run on the lab's truth (a rng of
        # their own a side, so that neither side's draws move the other's).
        cost = {}
        for mode in SIDES:
            rng = random.Random(f"{a.seed}-reruns-{mode}")
            c = cost[mode] = {"jobs_clean": 0, "tests_clean": 0, "jobs_regressed": 0,
                              "tests_regressed": 0, "confirm_wall": 0.0}
            for name in series:
                new = before[mode][1][name]
                if not new:
                    continue
                start = time.monotonic()
                out = agg(mode, "schedule", "confirm", name)
                c["confirm_wall"] += time.monotonic() - start
                jobs = confirm_jobs(out, name)
                if reruns and not jobs:
                    sys.exit(f"report-noise: {name}: {len(new)} possible new issues, schedule"
                             f" confirm queued no rerun: {out.strip()}")
                if a.window == JUDGE_WINDOW:
                    # The reruns are those of the reply's possible new issues: each one's test
                    # reruns times on its machine, no test of another group (or machine).
                    place = group_of.get if mode == "group" else str
                    for t, m in new:
                        times = sum(test_name(j) == t for jm, _, tests in jobs if jm == m
                                    for j in tests)
                        if times != reruns:
                            sys.exit(f"report-noise: {name}: {t} on {m} is rerun {times} times"
                                     f" there, not {reruns}: {out.strip()}")
                    for jm, run_id, tests in jobs:
                        if not {test_name(j) for j in tests} <= {t for t, m in new
                                                                 if place(m) == place(jm)}:
                            sys.exit(f"report-noise: {name}: {run_id} on {jm} reruns tests that"
                                     f" are no possible new issue of its {mode}: {out.strip()}")
                kind = "clean" if name.startswith("clean") else "regressed"
                for m, run_id, tests in jobs:
                    folder = RunFolder(os.path.join(scratch, run_id, m), tests)
                    folder.write(run_id, [status(j, group_of[m], regressed_of[name])
                                          for j in tests])
                    agg(mode, "ingest", "--machine", m, "--run-id", run_id, "--build", name,
                        folder.path)
                    shutil.rmtree(os.path.join(scratch, run_id))
                    c[f"jobs_{kind}"] += 1
                    c[f"tests_{kind}"] += len(tests)

        after = passes("after")
        group = {"before": before["group"][0], "after": after["group"][0]}
        machine = {"before": before["machine"][0], "after": after["machine"][0]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)

    clean = a.rounds
    real = a.rounds * a.groups * a.machines * a.regressions
    print(f"report-noise: {a.groups} shard groups x {a.machines} duplicate machines, {a.tests}"
          f" tests a run, {a.flaky} flaky per group failing {a.rate:g} of runs, baseline window"
          f" {a.window}; {clean} clean and {clean} regressed series ({a.regressions} real"
          f" regressions per machine), {runs} runs ingested, seed {a.seed}; {reruns} reruns"
          f" (schedule confirm)")
    print(f"  {'(before the reruns -> after)':50} {'machine-only':>24} {'group':>24}")

    def row(what, fmt, key, stages=("before", "after")):
        cells = [" -> ".join(fmt(side[s], key) for s in stages) for side in (machine, group)]
        print(f"  {what:50} {cells[0]:>24} {cells[1]:>24}")

    def per_clean(f, key):
        return f"{f[key] / clean:.2f}"

    row("false possible new issues per clean build", per_clean, "false")
    row("  ... tests per clean build", per_clean, "false_tests")
    row("false possible new issues, regressed builds", lambda f, k: str(f[k]), "false_regressed")
    row(f"real regressions named (of {real})", lambda f, k: str(f[k]), "named")
    row("real regressions missed", lambda f, k: str(f[k]), "missed")
    row("possible new issues confirmed by reruns", lambda f, k: str(f[k]), "confirmed", ("after",))
    row("possible new issues no rerun came back for", lambda f, k: str(f[k]), "unconfirmed",
        ("after",))
    row("flaky lines (machines) in the replies", lambda f, k: str(f[k]), "flaky")
    row("  ... by their baseline: failures over runs",
        lambda f, k: f"{f['flaky_failed']}/{f['flaky_runs']}" if f["flaky_runs"] else "-", "")
    row("  ... by the reruns: lines", lambda f, k: str(f[k]), "flaky_reruns", ("after",))
    row("  ... by the reruns: passes over reruns",
        lambda f, k: f"{f['flaky_reruns_passed']}/{f['flaky_reruns_runs']}"
        if f["flaky_reruns_runs"] else "-", "", ("after",))
    row(f"report wall time, {2 * clean} reports (s)", lambda f, k: f"{f[k]:.2f}", "wall")
    row(f"  ... the {a.repeat} passes' spread", lambda f, k: f"{f[k][0]:.2f}-{f[k][-1]:.2f}", "walls")
    def cost_row(what, value):
        print(f"  {what:50}" + "".join(f" {value(cost[s]):>24}" for s in ("machine", "group")))

    for kind in ("clean", "regressed"):
        cost_row(f"rerun jobs per {kind} series", lambda c: f"{c[f'jobs_{kind}'] / clean:.2f}")
        cost_row(f"  ... their test runs (a series runs {a.groups * a.machines * a.tests})",
                 lambda c: f"{c[f'tests_{kind}'] / clean:.2f}")
    cost_row(f"schedule confirm wall time, {2 * clean} series (s)",
             lambda c: f"{c['confirm_wall']:.2f}")
    target = {s: group[s]["false"] / clean <= 0.1 and group[s]["missed"] == 0
              for s in ("before", "after")}
    print(f"  group / machine-only, after reruns:"
          f" {group['after']['false'] / max(machine['after']['false'], 1):.3f} x the false ones,"
          f" {group['after']['wall'] / machine['after']['wall']:.2f} x the report time;"
          f" target (at most 0.1 false per clean build, none missed)"
          f" {'met' if target['before'] else 'NOT met'} without reruns,"
          f" {'met' if target['after'] else 'NOT met'} with {reruns}; bench wall"
          f" {time.monotonic() - started:.0f} s ({generated:.0f} s generating and ingesting)")


if __name__ == "__main__":
    main()

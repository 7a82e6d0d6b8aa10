#!/usr/bin/env python3
"""Checks of tests/lab/power-cut.t on results folders read back from the lab's disk.

  power-cut.py kept BEFORE AFTER RUN
      Everything journaled in BEFORE (the partition read back right after a cut) is
      still in AFTER (read back after the next boot): bootci-journal.txt's and every
      job's journal.txt's whole lines are a prefix of AFTER's, every test with a
      final verdict in BEFORE/results.json has the same verdict in AFTER/results.json,
      and AFTER's journals hold only whole, well-formed lines that agree. In BEFORE
      and AFTER, a job whose journal.txt has its end has every file at least as long
      as bootci's end of it says (an exit on disk has its outputs).
  power-cut.py final DIR RUN EXPECTED
      The finished run: results.json has every test of EXPECTED ("NAME VERDICT" lines)
      once, with that verdict (or incomplete when the journal says its job was in
      flight at a cut), no other test, and no job ran twice: at most one exit line
      per job in either journal, every subtest started once; the journals as in kept.
      A subtest cut in flight before any of its dynamic subtests was journaled or in
      its output is incomplete in place of the dynamic subtests it had not begun.

Each problem is printed on a line of its own; the exit status is 1 when there was one.
"""
import collections
import json
import os
import re
import sys

# Verdicts that a later boot may still change: the job was in flight, or not started.
UNSETTLED = {"incomplete", "notrun"}

# bootci-journal.txt's lines (lib/results_dir.h): a torn line made whole by a later
# append, or two lines run together, does not match.
INT, SECONDS = r"(-?[0-9]+)", r"[0-9]+(\.[0-9]+)?"
RUN_JOURNAL_LINE = re.compile("|".join([
    rf"boot {INT} [0-9]+ \S+", rf"start {INT}", rf"dynamic {INT} \S+@\S+",
    rf"(exit|timeout) {INT} {INT} {SECONDS}( (out|err|dmesg|comms)=[0-9]+)*",
    rf"incomplete {INT} {INT}",
    rf"capped {INT} {INT}", r"abort \S+", "done"]))
JOB_EXIT_LINE = re.compile(rf"(exit|timeout):{INT}( \({SECONDS}s\))?")


def whole_lines(path):
    """The lines of PATH that end in a newline (a torn last line is not journaled)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    return data.decode("utf-8", "replace").split("\n")[:-1]


def refuse_duplicates(pairs):
    seen = collections.Counter(key for key, _ in pairs)
    doubled = [key for key, count in seen.items() if count > 1]
    if doubled:
        raise ValueError("keys given more than once: " + ", ".join(sorted(doubled)))
    return dict(pairs)


def verdicts(folder):
    """{test: result} of FOLDER/results.json, read refusing doubled keys."""
    with open(os.path.join(folder, "results.json")) as f:
        tests = json.load(f, object_pairs_hook=refuse_duplicates)["tests"]
    return {name: test.get("result", "(none)") for name, test in tests.items()}


def job_folders(run):
    return sorted((int(n) for n in os.listdir(run) if n.isdigit()))


def job_tests(joblist_line, name):
    """The names of JOBLIST_LINE's tests ("BINARY" or "BINARY SUB,SUB"), NAME among
    them when it is one of their dynamic subtests."""
    binary, _, subtests = joblist_line.partition(" ")
    if not subtests:
        return {f"igt@{binary}"}
    names = {f"igt@{binary}@{subtest}" for subtest in subtests.split(",")}
    return names | ({name} if any(name.startswith(n + "@") for n in names) else set())


def journal_problems(run):
    """Lines of RUN's journals that are not whole, well-formed lines of their format, boots
    not counted one by one, a job's end in the run journal that its journal.txt contradicts."""
    problems, boots = [], 0
    job_exit = {}
    for job in job_folders(run):
        for line in whole_lines(os.path.join(run, str(job), "journal.txt")):
            if ":" in line and not JOB_EXIT_LINE.fullmatch(line):
                problems.append(f"{job}/journal.txt: malformed line {line!r}")
            elif ":" in line:
                job_exit[str(job)] = line.split(":")[1].split()[0]
    for line in whole_lines(os.path.join(run, "bootci-journal.txt")):
        if not RUN_JOURNAL_LINE.fullmatch(line):
            problems.append(f"bootci-journal.txt: malformed line {line!r}")
            continue
        words = line.split()
        if words[0] == "boot":
            boots += 1
            if words[1] != str(boots):
                problems.append(f"bootci-journal.txt: {line!r} is its boot number {boots}")
        elif words[0] in ("exit", "timeout") and words[1] in job_exit and job_exit[words[1]] != words[2]:
            problems.append(f"bootci-journal.txt: {line!r}, but {words[1]}/journal.txt says "
                            f"{words[0]}:{job_exit[words[1]]}")
    return problems


END_FILES = {"out": "out.txt", "err": "err.txt", "dmesg": "dmesg.txt", "comms": "comms"}


def short_ends(run):
    """(job, line, file, bytes it has, bytes said, whether its journal.txt has its end) for
    each file of a job shorter than bootci's end of the job says it was then."""
    short = []
    for line in whole_lines(os.path.join(run, "bootci-journal.txt")):
        words = line.split()
        if not RUN_JOURNAL_LINE.fullmatch(line) or words[0] not in ("exit", "timeout"):
            continue
        job_lines = whole_lines(os.path.join(run, words[1], "journal.txt"))
        ended = any(JOB_EXIT_LINE.fullmatch(j) for j in job_lines)
        for word in words[4:]:
            name, _, size = word.partition("=")
            path = os.path.join(run, words[1], END_FILES[name])
            have = os.path.getsize(path) if os.path.exists(path) else -1
            if have < int(size):
                short.append((words[1], line, END_FILES[name], have, int(size), ended))
    return short


def end_problems(run):
    """A job whose journal.txt has its end while a file of it is shorter than bootci's end
    of the job says it was then: an exit on disk must always have its outputs."""
    return [f"{job}/{name}: {have} bytes, but its journal.txt has its end and {line!r} "
            f"says {said}" for job, line, name, have, said, ended in short_ends(run) if ended]


def kept(before, after, run_id):
    run_before = os.path.join(before, "runs", run_id)
    run_after = os.path.join(after, "runs", run_id)
    problems = journal_problems(run_after) + end_problems(run_after)
    # Right after the cut too, before the next boot repaired anything.
    problems += end_problems(run_before)
    journals = ["bootci-journal.txt"]
    journals += [os.path.join(str(job), "journal.txt") for job in job_folders(run_before)]
    for journal in journals:
        old = whole_lines(os.path.join(run_before, journal))
        new = whole_lines(os.path.join(run_after, journal))
        if new[: len(old)] != old:
            problems.append(f"{journal}: the {len(old)} lines journaled before the cut are not "
                            f"the start of it after the next boot: {old!r} then {new!r}")
    old_verdicts, new_verdicts = verdicts(before), verdicts(after)
    settled = 0
    for name, result in sorted(old_verdicts.items()):
        if result in UNSETTLED:
            continue
        settled += 1
        if new_verdicts.get(name) != result:
            problems.append(f"{name}: {result} before the cut, "
                            f"{new_verdicts.get(name, 'absent')} after the next boot")
    print(f"{settled} verdicts settled before the cut, "
          f"{len(whole_lines(os.path.join(run_before, 'bootci-journal.txt')))} run journal lines")
    return problems


def final(folder, run_id, expected_file):
    run = os.path.join(folder, "runs", run_id)
    problems = journal_problems(run) + end_problems(run)
    try:
        got = verdicts(folder)
    except ValueError as error:
        return [f"results.json: {error}"]
    expected = {}
    for line in whole_lines(expected_file):
        if line and not line.startswith("#"):
            name, verdict = line.split()
            expected[name] = verdict
    run_journal = whole_lines(os.path.join(run, "bootci-journal.txt"))
    in_flight = {line.split()[1] for line in run_journal if line.startswith("incomplete ")}
    # A job whose end reached the disk before its outputs did (a cut inside the barrier that
    # makes them durable together) is incomplete too: the executor gives it no exit.
    in_flight |= {job for job, *_ in short_ends(run)}
    ends = collections.Counter(line.split()[1] for line in run_journal
                               if line.split()[0] in ("exit", "timeout"))
    problems += [f"bootci-journal.txt: job {job} ended {count} times"
                 for job, count in sorted(ends.items()) if count > 1]
    # A cut after `done` (during the hand-over) boots the finished run once more: its boot line
    # may follow, nothing else.
    settled_lines = [line for line in run_journal if not line.startswith("boot ")]
    if not settled_lines or settled_lines[-1] != "done":
        problems.append("bootci-journal.txt: the run is not done")
    joblist = whole_lines(os.path.join(run, "joblist.txt"))

    def job_of(name):
        return next((str(n) for n, line in enumerate(joblist) if name in job_tests(line, name)), None)

    # A subtest cut before bootci's journal or its output knew any of its dynamic subtests had
    # started is not run again, as igt_runner does not run again a subtest in flight: it is
    # incomplete, and the dynamic subtests it had not begun have no result (one that only the
    # kernel log names is incomplete). Its dynamic subtests are not lost, they never ran.
    unresumed = set()
    for name in sorted(set(got) - set(expected)):
        job = job_of(name)
        if got[name] != "incomplete" or job not in in_flight or not any(
                other.startswith(name + "@") for other in expected):
            continue
        subtest = name.split("@", 2)[2]
        journaled = [line for line in run_journal if line.startswith(f"dynamic {job} {subtest}@")]
        out = whole_lines(os.path.join(run, job, "out.txt"))
        if not journaled and not any(line.startswith("Starting dynamic subtest: ") for line in out):
            unresumed.add(name)
    for name, verdict in sorted(expected.items()):
        container = name.rsplit("@", 1)[0]
        if name not in got and container in unresumed:
            continue
        if name not in got:
            problems.append(f"{name}: lost (not in results.json)")
            continue
        job = job_of(name)
        if got[name] != verdict and not (got[name] == "incomplete" and job in in_flight):
            problems.append(f"{name}: {got[name]}, expected {verdict}"
                            f" (job {job}{' was' if job in in_flight else ' was not'} cut)")
    problems += [f"{name}: in results.json but not in the testlist"
                 for name in sorted(set(got) - set(expected) - unresumed)]
    for job in job_folders(run):
        lines = whole_lines(os.path.join(run, str(job), "journal.txt"))
        exits = [line for line in lines if line.startswith(("exit:", "timeout:"))]
        if len(exits) > 1:
            problems.append(f"{job}/journal.txt: {len(exits)} exit lines: {exits!r}")
        # A subtest whose dynamic subtests had started when a cut fell runs again for the rest of
        # them (--dynamic-subtest '*,!started'): its start repeats, each dynamic subtest's must not.
        resumed = {line.split()[2].split("@")[0] for line in run_journal
                   if line.startswith(f"dynamic {job} ")} if str(job) in in_flight else set()
        starts = collections.Counter(line for line in lines if ":" not in line)
        problems += [f"{job}/journal.txt: subtest {name} started {count} times"
                     for name, count in starts.items() if count > 1 and name not in resumed]
        out = collections.Counter(line for line in whole_lines(os.path.join(run, str(job), "out.txt"))
                                  if line.startswith("Starting dynamic subtest: ") or
                                  (line.startswith("Starting subtest: ") and
                                   line[len("Starting subtest: "):] not in resumed))
        problems += [f"{job}/out.txt: '{line}' {count} times" for line, count in out.items() if count > 1]
    print(f"{len(got)} tests in results.json, {len(expected)} expected, "
          f"jobs cut in flight: {' '.join(sorted(in_flight, key=int)) or 'none'}"
          + "".join(f"; {name} incomplete, cut before any dynamic subtest was journaled"
                    for name in sorted(unresumed)))
    return problems


def main(argv):
    if len(argv) == 5 and argv[1] == "kept":
        problems = kept(argv[2], argv[3], argv[4])
    elif len(argv) == 5 and argv[1] == "final":
        problems = final(argv[2], argv[3], argv[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
# Writes an igt_runner results folder (the layout of ../shared/conformance)
# for the report tests: report-runs.py DIR BINARY@SUBTEST=STATUS[:DMESG]...
# STATUS is pass, fail, skip, dmesg-warn (a pass whose dmesg has a
# KERN_WARNING line), incomplete (started, never ended) or notrun (listed in
# the job list, never started); DMESG, when given, is one more kernel message in the
# test's dmesg.txt, at KERN_ERR (a dmesg-warn too), for known-issue filters.
# A spec suspend=L1,L2,... writes suspend-cycles.txt instead: an S3 cycle each (mem-0001, ...)
# that passed with latency Li seconds, as the executor records them.
import os
import sys

SUBTEST_RESULT = {"pass": "SUCCESS", "dmesg-warn": "SUCCESS", "fail": "FAIL", "skip": "SKIP"}
EXIT = {"pass": 0, "dmesg-warn": 0, "fail": 1, "skip": 77, "incomplete": None}


def main():
    folder, specs = sys.argv[1], sys.argv[2:]
    os.makedirs(folder)
    jobs = []
    for spec in specs:
        name, status = spec.split("=", 1)
        if name == "suspend":
            with open(os.path.join(folder, "suspend-cycles.txt"), "w") as f:
                for n, latency in enumerate(status.split(","), 1):
                    f.write(f"mem-{n:04d} pass 5.000 4.500 {float(latency):.3f} 0.100 0.200 rtc\n")
            continue
        status, _, extra = status.partition(":")
        binary, subtest = name.split("@", 1)
        jobs.append((binary, subtest, status, extra))
    with open(os.path.join(folder, "joblist.txt"), "w") as f:
        f.writelines(f"{b} {s}\n" for b, s, _, _ in jobs)
    with open(os.path.join(folder, "metadata.txt"), "w") as f:
        f.write(f"abort_mask : 0\nname : {os.path.basename(folder)}\ndry_run : 0\nsync : 0\n"
                "log_level : 0\noverwrite : 0\nmultiple_mode : 0\ninactivity_timeout : 0\n"
                "use_watchdog : 0\npiglit_style_dmesg : 0\ndmesg_warn_level : 4\n"
                "test_root : /tests\nresults_path : /results\n")
    for name, text in (("starttime.txt", "1764763200.0\n"), ("endtime.txt", "1764763260.0\n"),
                       ("uname.txt", "Linux lab 6.12.0 #1 SMP x86_64\n")):
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    for index, (binary, subtest, status, extra) in enumerate(jobs):
        if status == "notrun":
            continue
        job = os.path.join(folder, str(index))
        os.makedirs(job)
        with open(os.path.join(job, "out.txt"), "w") as f:
            f.write(f"IGT-Version: 1.30 (x86_64) (Linux: 6.12.0 x86_64)\n"
                    f"Starting subtest: {subtest}\n")
            if status != "incomplete":
                f.write(f"Subtest {subtest}: {SUBTEST_RESULT[status]} (0.010s)\n")
        with open(os.path.join(job, "err.txt"), "w") as f:
            f.write("")
        with open(os.path.join(job, "journal.txt"), "w") as f:
            f.write(f"{subtest}\n" if status == "incomplete" else
                    f"{subtest}\nexit:{EXIT[status]} (0.020s)\n")
        lines = [f"14,{index * 10 + 1},1000{index}000,-;[IGT] {binary}: executing",
                 f"14,{index * 10 + 2},1000{index}100,-;[IGT] {binary}: starting subtest {subtest}"]
        if status == "dmesg-warn":
            lines.append(f"4,{index * 10 + 3},1000{index}200,-;i915 0000:00:02.0: drm_WARN_ON(x)")
        if extra:
            lines.append(f"3,{index * 10 + 4},1000{index}300,-;{extra}")
        if status != "incomplete":
            lines.append(f"14,{index * 10 + 5},1000{index}400,-;[IGT] {binary}: exiting, ret={EXIT[status]}")
        with open(os.path.join(job, "dmesg.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

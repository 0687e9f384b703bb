#!/usr/bin/env python3
"""One line per module from the surefire/failsafe XML reports under a directory (of this run only:
none older than the marker file given second):
tests, failures, errors, skipped and the seconds its tests took (modules without test reports are not
listed); a module with failures names its failing classes. A test that ran past its timeout (root POM,
test.method.timeout) left the stacks of every thread in its output file: the summary prints the stuck thread's and
every thread's that runs this project's code, so a hang says where it hung. A third argument names a directory of
test JVMs' thread dumps (jcmd Thread.print, taken by test.sh when the build ran far too long): the test engine's
workers and the threads in this project's code are printed from each. Run by test.sh after Maven, pass or fail."""
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

root = sys.argv[1] if len(sys.argv) > 1 else "."
# reports older than this file (made when the run started) are from an earlier run: left out
since = os.path.getmtime(sys.argv[2]) if len(sys.argv) > 2 else 0
rows = {}
for report in sorted(glob.glob(os.path.join(root, "**", "target", "*-reports", "TEST-*.xml"), recursive=True)):
    if os.path.getmtime(report) < since:
        continue
    module = os.path.relpath(report, root).split(os.sep + "target" + os.sep)[0]
    try:
        suite = ET.parse(report).getroot()
    except ET.ParseError:
        rows.setdefault(module, [0, 0, 0, 0, 0.0, []])[5].append(os.path.basename(report) + " (unreadable)")
        continue
    r = rows.setdefault(module, [0, 0, 0, 0, 0.0, []])
    r[0] += int(suite.get("tests", 0))
    r[1] += int(suite.get("failures", 0))
    r[2] += int(suite.get("errors", 0))
    r[3] += int(suite.get("skipped", 0))
    r[4] += float(suite.get("time", 0) or 0)
    if int(suite.get("failures", 0)) or int(suite.get("errors", 0)):
        r[5].append(suite.get("name", "?").rsplit(".", 1)[-1])
if not rows:
    print("test summary: no test reports found")
else:
    width = max(len(m) for m in rows)
    print("test summary per module (tests, failures, errors, skipped, seconds of tests):")
    total = [0, 0, 0, 0, 0.0]
    for module in sorted(rows, key=lambda m: -rows[m][4]):
        t, f, e, s, secs, bad = rows[module]
        for i, v in enumerate((t, f, e, s, secs)):
            total[i] += v
        mark = "  FAILED: " + ", ".join(sorted(set(bad))) if bad else ""
        print(f"  {module:<{width}}  {t:5d} tests  {f:3d} failed  {e:3d} errors  {s:3d} skipped  {secs:7.1f} s{mark}")
    print(f"  {'all':<{width}}  {total[0]:5d} tests  {total[1]:3d} failed  {total[2]:3d} errors  {total[3]:3d} skipped  {total[4]:7.1f} s")


def stacks(dump):
    """Splits a thread dump (JUnit's PreInterruptThreadDumpPrinter or jcmd Thread.print) into (thread line, frames)."""
    for block in re.split(r"\n\s*\n", dump):
        lines = [l for l in block.splitlines() if l.strip()]
        if lines and not lines[0].startswith("\tat "):
            yield lines[0], [l for l in lines[1:] if l.startswith("\tat ")]


def print_threads(text, wanted, budget):
    """Prints the threads of a dump that wanted(name, frames) picks, each down to this project's outermost frame
    (below it: the test engine, the event loop), at most budget lines in all."""
    lines = 0
    for name, frames in stacks(text):
        if wanted(name, frames):
            mine = [i for i, l in enumerate(frames) if "io.reactivelocks" in l]
            frames = frames[:min(mine[-1] + 2, 30)] if mine else frames[:30]
            print("  " + name)
            for l in frames:
                print("    " + l.strip())
            lines += 1 + len(frames)
        if lines > budget:
            print("  (cut: the rest is in the dump)")
            break


def in_our_code(frames):
    return any("io.reactivelocks" in l for l in frames)


shown = 0
for output in sorted(glob.glob(os.path.join(root, "**", "target", "*-reports", "*-output.txt"), recursive=True)):
    if os.path.getmtime(output) < since or shown >= 3:
        continue
    with open(output, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for m in re.finditer(r"^Thread (.*) will be interrupted\.$", text, re.M):
        if shown >= 3:
            break
        shown += 1
        stuck = m.group(1)
        print(f"a test ran past its timeout ({os.path.relpath(output, root)}): {stuck}; the threads in this project's code:")
        end = text.find("\nThread ", m.end())
        print_threads(text[m.end():end if end > 0 else len(text)],
                      lambda name, frames: name.startswith(stuck) or in_our_code(frames), 240)

if len(sys.argv) > 3:
    for dump in sorted(glob.glob(os.path.join(sys.argv[3], "*.txt"))):
        with open(dump, encoding="utf-8", errors="replace") as f:
            text = f.read()
        print(f"a test JVM still running when the build ran too long (pid {os.path.basename(dump)[:-4]}): the test engine's "
              "workers and the threads in this project's code:")
        print_threads(text, lambda name, frames: "ForkJoinPool" in name or "junit" in name.lower() or in_our_code(frames), 300)

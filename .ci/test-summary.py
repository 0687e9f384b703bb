#!/usr/bin/env python3
"""One line per module from the surefire/failsafe XML reports under a directory (of this run only:
none older than the marker file given second):
tests, failures, errors, skipped and the seconds its tests took (modules without test reports are not
listed); a module with failures names its failing classes. Run by test.sh after Maven, pass or fail."""
import glob
import os
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
    sys.exit(0)
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

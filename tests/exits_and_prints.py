#!/usr/bin/env python3
"""Runs a command and passes only if it exits with the expected status AND
its output matches every expected regular expression.

usage: exits_and_prints.py STATUS EXPECT_REGEX -- COMMAND ARGS...

STATUS is the exit status the command must have (0 for success). The
command's stdout and stderr are read together; EXPECT_REGEX is one or more
Python regular expressions separated by '|||', each of which must match
somewhere in that output ('.' matches newlines too, '^' and '$' match at
line ends, as in CTest's PASS_REGULAR_EXPRESSION, which this replaces: that
property alone passes a program that prints the line and then crashes).
The output is printed; on failure, so is every check that failed (the
status and each pattern that did not match). Exit status 0 when all
checks pass, 1 when one fails, 2 on bad usage.
"""
import re
import subprocess
import sys


def main():
    if "--" not in sys.argv or sys.argv.index("--") != 3 or len(sys.argv) < 5:
        print(__doc__)
        return 2
    try:
        want = int(sys.argv[1])
    except ValueError:
        print(f"exits_and_prints.py: STATUS must be a number, not {sys.argv[1]!r}")
        return 2
    patterns = sys.argv[2].split("|||")
    command = sys.argv[4:]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    print(run.stdout, end="" if run.stdout.endswith("\n") or not run.stdout else "\n")
    failures = []
    if run.returncode != want:
        failures.append(f"{command[0]} exited {run.returncode}, not {want}")
    for pattern in patterns:
        if not re.search(pattern, run.stdout, re.DOTALL | re.MULTILINE):
            failures.append(f"the output does not match: {pattern}")
    for failure in failures:
        print(f"FAILED: {failure}")
    if not failures:
        print(f"passed: {command[0]} exited {want}, and its output matches all {len(patterns)} pattern(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

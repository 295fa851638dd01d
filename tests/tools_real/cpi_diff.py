#!/usr/bin/env python3
"""ClassPortInfo against OpenSM: `saquery CPI` on H2 of fat-tree:2:4, once
with OpenSM as the SM (`--sm none`, OpenSM on H1) and once with the
built-in SM, field by field.

usage: cpi_diff.py IBFAB RECORDING

OpenSM's answer must be RECORDING (tests/sm/opensm_sa_class_port_info.txt,
which the SA's unit tests compare its bytes with), so that a new OpenSM
shows here first; the built-in SA's answer must be OpenSM's, field by field,
except the fields listed in KNOWN with their reason. saquery must exit 0
both times.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# field -> why the built-in SA answers differently. Empty: every field agrees
# (Redirect and Trap fields included: OpenSM neither redirects nor sets a
# trap destination in its SA ClassPortInfo).
KNOWN = {}


def fields(text):
    """[(label, value)] of the lines `Label.....value`, in order."""
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^\s+(\S.*?)\.{2,}(.*)$", line)
        if m:
            out.append((m.group(1), m.group(2).strip()))
    return out


def ask(ibfab, opensm):
    args = [sys.executable, os.path.join(HERE, "served.py"), ibfab, "fat-tree:2:4", "H2", "SA ClassPortInfo:"]
    if opensm:
        args += ["--sm-none", "--background", "H1", "opensm", "-d2", "-f", "/dev/stdout",
                 "--wait-for", "SUBNET UP"]
    r = subprocess.run(args + ["--", "saquery", "CPI"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=240)
    who = "OpenSM" if opensm else "the built-in SA"
    if r.returncode != 0:
        print(r.stdout[-3000:])
        raise SystemExit(f"saquery CPI against {who} failed (served.py exit {r.returncode})")
    got = fields(r.stdout)
    if len(got) != 17:
        print(r.stdout[-3000:])
        raise SystemExit(f"saquery CPI against {who}: {len(got)} fields, expected 17")
    return got


def compare(a, b, what, known):
    bad = 0
    for (ka, va), (kb, vb) in zip(a, b):
        if ka != kb:
            print(f"DIFFERS: {what}: field {ka!r} against {kb!r}")
            bad += 1
        elif va != vb and ka in known:
            print(f"known: {what}: {ka} = {va} against {vb} ({known[ka]})")
        elif va != vb:
            print(f"DIFFERS: {what}: {ka} = {va} against {vb}")
            bad += 1
    return bad


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ibfab, recording = sys.argv[1], sys.argv[2]
    with open(recording) as f:
        recorded = fields(f.read())
    theirs = ask(ibfab, True)
    ours = ask(ibfab, False)
    bad = compare(theirs, recorded, "OpenSM now against the recording", {})
    bad += compare(ours, theirs, "built-in SA against OpenSM", KNOWN)
    print(f"{len(theirs)} fields compared, {bad} unexplained differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

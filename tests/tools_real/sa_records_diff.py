#!/usr/bin/env python3
"""The differential test of SA records: every saquery record type, from the
built-in SA and from OpenSM's SA on the same served fabric, record by record
and field by field.

usage: sa_records_diff.py IBFAB [--register SA_REGISTER] [TOPOLOGY [TYPE...]]

Runs `saquery --smkey 1 TYPE` for each record type (default: all of them)
on H2 of TOPOLOGY (default fat-tree:2:4) under `ibfab serve` twice (via
served.py): with the
built-in SM, and with `--sm none` and OpenSM on H1. The two SMs hand out
different LIDs and route differently, so every LID is first replaced by the
GUID of the port it names (from that run's NodeRecords), and the fields that
follow from routing or from the SM's own configuration are listed in KNOWN
with their reason (docs/COMPATIBILITY.md says the same). Everything else
must agree: the same records, in the same order, with the same fields.
With --register, SA_REGISTER runs first on H2 in each run (it registers a
ServiceRecord and an InformInfo subscription), so that those tables are not
empty.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

TYPES = ["CPI", "NR", "PIR", "LR", "SWIR", "LFTR", "MFTR", "GIR", "SMIR", "IIR", "SR", "PKTR", "SL2VL",
         "VLAR", "PR"]

# Every host joins the IPoIB broadcast group once its port is up and an SM
# answers (with OpenSM, only after its first sweep): the queries start once
# every host is a member, so that both fabrics carry the same multicast state.
def wait_for_group(hosts):
    return (f"i=0; while [ $(saquery --smkey 1 -m 2>/dev/null | grep -c PortGid) -lt {hosts} ] "
            "&& [ $i -lt 200 ]; do sleep 0.3; i=$((i+1)); done")


def hosts_of(topology):
    """Hosts of a fat-tree:2:K (K*K/2) or fat-tree:3:K (K*K*K/4) spec."""
    m = re.match(r"^fat-tree:([23]):(\d+)$", topology)
    if not m:
        raise SystemExit(f"{topology}: only fat-tree:2:K and fat-tree:3:K are supported")
    k = int(m.group(2))
    return k * k // 2 if m.group(1) == "2" else k * k * k // 4

# Fields that name a LID, by record type (saquery's labels).
LID_FIELDS = {"lid", "LID", "EndPortLid", "FromLID", "ToLID", "dlid", "slid", "Lid:", "SMLid:"}

# (record type, field) -> why the two SAs differ there. None as the field:
# the whole record type is compared by count and identity only.
KNOWN = {
    ("SMIR", "ActCount"): "SMPs sent by each SM",
    ("PIR", "CapMask:"): "OpenSM under `ibfab exec` cannot set IsSM on its port (no issm device)",
    ("PIR", "IsSM"): "OpenSM under `ibfab exec` cannot set IsSM on its port (no issm device)",
    ("LFTR", None): "the entries follow each SM's LIDs and routing engine",
    ("MFTR", None): "the entries follow each SM's port numbering of its trees",
    ("PIR", "LMC:"): "set by each SM",
    ("PIR", "SubnetTimeout:"): "set by each SM",
    ("PIR", "HoqLife:"): "OpenSM sets HOQLife; ibfab's SM leaves the SMA's value",
    ("PIR", "VLHighLimit:"): "OpenSM sets it; ibfab's SM does not",
    ("PIR", "OperVLs:"): "OpenSM sets OperationalVLs; ibfab's SM does not",
    ("PIR", "LinkState:"): "read at a different point of each SM's sweep",
    ("PIR", "LocalPort:"): "a switch answers with the port the SMP came in by: each SM's own directed route",
    ("PIR", "MkeyLeasePeriod:"): "set by each SM",
    ("PIR", "PartEnforceInb:"): "OpenSM sets partition enforcement on switch ports",
    ("PIR", "PartEnforceOutb:"): "OpenSM sets partition enforcement on switch ports",
    ("PIR", "FilterRawInb:"): "OpenSM sets partition enforcement on switch ports",
    ("PIR", "FilterRawOutb:"): "OpenSM sets partition enforcement on switch ports",
    ("PIR", "ClientReregister:"): "set by each SM",
    ("PIR", "SMSL:"): "set by each SM",
    ("SWIR", "MulticastFDBTop"): "OpenSM's SA gives the top it set after the joins (the end of the last MFT block "
                                 "in use); the built-in SA gives its sweep's (0xBFFF), its SM sets the highest MLID",
}


def run_queries(ibfab, topology, opensm, types, register=None):
    fd, out = tempfile.mkstemp(prefix="ibfab-sa-records-")
    os.close(fd)
    script = wait_for_group(hosts_of(topology)) + "; " + (f"{register} >&2; " if register else "") + "; ".join(
        f"echo '### {t}' >> {out}; saquery --smkey 1 {t} >> {out} 2>/dev/null; echo \"rc=$?\" >> {out}"
        for t in types) + "; echo queried"
    args = [sys.executable, os.path.join(HERE, "served.py"), ibfab, topology, "H2", "queried"]
    if opensm:
        args += ["--sm-none", "--background", "H1", "opensm", "-d2", "-f", "/dev/stdout",
                 "--wait-for", "SUBNET UP"]
    r = subprocess.run(args + ["--", "sh", "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    with open(out) as f:
        text = f.read()
    os.unlink(out)
    if r.returncode != 0:
        print(r.stdout[-3000:])
        raise SystemExit(f"saquery failed ({'OpenSM' if opensm else 'built-in SA'})")
    return text


def parse(text):
    """{type: (status line, [record: [(field, value)]])}"""
    out = {}
    for block in text.split("### ")[1:]:
        lines = block.splitlines()
        kind = lines[0].strip()
        records, status = [], ""
        for line in lines[1:]:
            if line.startswith("rc="):
                status = line
            elif re.match(r"^\S.*(dump|ClassPortInfo):$", line):
                records.append([])
            elif records and line.strip() and not line.strip().startswith("ibwarn"):
                m = re.match(r"^\s*([^.]+?)\.{2,}(.*)$", line)
                records[-1].append((m.group(1).strip(), m.group(2).strip()) if m else (line.strip(), ""))
        out[kind] = (status, records)
    return out


def lid_map(records):
    """LID -> port GUID, from the NodeRecords."""
    m = {}
    for rec in records:
        f = dict(rec)
        if "lid" in f and "port_guid" in f:
            m[f["lid"]] = f["port_guid"]
    return m


def normalise(records, lids):
    out = []
    for rec in records:
        rec = [(k, v) for k, v in rec if k != "IsSM"]
        out.append([(k, lids.get(v, f"LID {v}") if k in LID_FIELDS and v not in ("0",) else v)
                    for k, v in rec])
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    ibfab = sys.argv[1]
    rest = sys.argv[2:]
    register = None
    if rest[:1] == ["--register"]:
        register, rest = rest[1], rest[2:]
    topology = rest[0] if rest else "fat-tree:2:4"
    types = rest[1:] or TYPES
    if "NR" not in types:
        types = ["NR"] + types  # the LID to GUID map comes from the NodeRecords
    ours = parse(run_queries(ibfab, topology, False, types, register))
    theirs = parse(run_queries(ibfab, topology, True, types, register))
    ours_lids, theirs_lids = lid_map(ours["NR"][1]), lid_map(theirs["NR"][1])
    bad = 0
    for kind in types:
        (st_a, a), (st_b, b) = ours.get(kind, ("", [])), theirs.get(kind, ("", []))
        a, b = normalise(a, ours_lids), normalise(b, theirs_lids)
        if st_a != st_b:
            print(f"DIFFERS: {kind}: saquery {st_a} here, {st_b} with OpenSM")
            bad += 1
            continue
        whole = KNOWN.get((kind, None))
        if whole:
            print(f"known: {kind}: {len(a)} records here, {len(b)} with OpenSM, entries not compared ({whole})")
            continue
        if len(a) != len(b):
            print(f"DIFFERS: {kind}: {len(a)} records here, {len(b)} with OpenSM")
            bad += 1
            continue
        known_seen = {}
        for i, (ra, rb) in enumerate(zip(a, b)):
            if len(ra) != len(rb):
                print(f"DIFFERS: {kind} record {i}: {len(ra)} fields here, {len(rb)} with OpenSM")
                bad += 1
                continue
            for (ka, va), (kb, vb) in zip(ra, rb):
                if (ka, va) == (kb, vb):
                    continue
                why = KNOWN.get((kind, ka)) if ka == kb else None
                if why:
                    known_seen[ka] = why
                    continue
                print(f"DIFFERS: {kind} record {i}: {ka} = {va} here, {kb} = {vb} with OpenSM")
                bad += 1
        for field, why in sorted(known_seen.items()):
            print(f"known: {kind}: {field} differs ({why})")
        print(f"{kind}: {len(a)} records compared")
    print(f"{bad} unexplained differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The partitions differential: one partitions.conf given to the built-in SM
(`ibfab serve --partitions FILE`) and to OpenSM (`opensm -P FILE`, under
`ibfab serve --sm none`) on the same fabric must give the same P_Key tables
and the same SA answers.

usage: partitions_diff.py IBFAB SA_JOIN_DIFF CONF

On fat-tree:2:4 (the GUIDs CONF names), for each SM, H2, H4 and H6 each:
  - read their own port's P_Key table by SMP (`smpquery -D pkeys 0`, the
    SMA's answer, not the SA's view);
  - join two partitions' IPoIB broadcast groups and create a group with
    each partition's P_Key (`SA_JOIN_DIFF partitions`: the SA's status);
  - ask the SA for its P_KeyTableRecords and every PathRecord it gives them
    (`saquery --smkey 1 PKTR`, `saquery PR`: requester-dependent), LIDs
    compared as the GUIDs they name (NodeRecords), and for the multicast
    groups the partitions made (`saquery -g`: MGID, MLID, MTU, rate, P_Key,
    SL; the groups the joins make are left out, their MLIDs depending on
    which host came first).
Every line must agree.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sa_records_diff as records  # noqa: E402

HOSTS = "H2,H4,H6"


def run(ibfab, client, conf, opensm):
    out = tempfile.mkdtemp(prefix="ibfab-partitions-")
    script = (
        f"G=$({client} partitions | sed -n 's/^port //p'); "
        f"smpquery -D pkeys 0 > {out}/$G.pkeys 2>&1; "
        f"{client} partitions > {out}/$G.joins; "
        f"for t in NR PKTR PR; do echo \"### $t\"; saquery --smkey 1 $t 2>/dev/null; echo \"rc=$?\"; done"
        f" > {out}/$G.sa; (echo '### G'; saquery -g 2>/dev/null; echo \"rc=$?\") >> {out}/$G.sa; echo done")
    args = [sys.executable, os.path.join(HERE, "served.py"), ibfab, "fat-tree:2:4", HOSTS, "done",
            "--copies", str(len(HOSTS.split(",")))]
    if opensm:
        args += ["--sm-none", "--background", "H1", "opensm", "-P", conf, "-d2", "-f", "/dev/stdout",
                 "--wait-for", "SUBNET UP"]
    else:
        args += ["--serve-arg", "--partitions", "--serve-arg", conf]
    r = subprocess.run(args + ["--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    if r.returncode != 0:
        print(r.stdout[-3000:])
        raise SystemExit(f"the run failed ({'OpenSM' if opensm else 'built-in SM'})")
    files = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name)) as f:
            files[name] = f.read()
        os.unlink(os.path.join(out, name))
    os.rmdir(out)
    return files


def lines_of(files):
    """Comparable lines: P_Key tables and join statuses as they are, SA
    records with every LID replaced by its port's GUID."""
    out = []
    for name, text in files.items():
        if name.endswith(".sa"):
            parsed = records.parse(text)
            lids = records.lid_map(parsed["NR"][1])
            for kind in ("PKTR", "PR", "G"):
                status, recs = parsed.get(kind, ("", []))
                if kind == "G":  # the groups the partitions make, not those the joins above may have made
                    recs = [r for r in recs if not dict(r).get("MGID", "").startswith("ff12:4001::")]
                out.append(f"{name} {kind} {status} {len(recs)} records")
                for i, rec in enumerate(records.normalise(recs, lids)):
                    out += [f"{name} {kind} {i} {k} = {v}" for k, v in rec]
        else:
            out += [f"{name} {line}" for line in text.splitlines() if line.strip()]
    return out


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    ibfab, client, conf = sys.argv[1:]
    ours = lines_of(run(ibfab, client, conf, False))
    theirs = lines_of(run(ibfab, client, conf, True))
    bad = 0
    for a, b in zip(ours, theirs):
        if a != b:
            print(f"DIFFERS:\n  built-in: {a}\n  OpenSM:   {b}")
            bad += 1
    if len(ours) != len(theirs):
        print(f"DIFFERS: {len(ours)} lines here, {len(theirs)} with OpenSM")
        bad += 1
    for line in ours:
        if ".pkeys" in line or ".joins" in line:
            print(line)
    print(f"{len(ours)} lines compared, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

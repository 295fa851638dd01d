#!/usr/bin/env python3
"""Runs ibfab-passthrough and checks what it writes, field by field.

usage: passthrough_check.py multicast PASSTHROUGH TEMPLATE COUNT FAMILY
       passthrough_check.py multicast-run IBFAB TEMPLATE COUNT
       passthrough_check.py shortfall PASSTHROUGH
       passthrough_check.py refuse PASSTHROUGH CASE
       passthrough_check.py device PASSTHROUGH CASE
       passthrough_check.py links PASSTHROUGH

multicast (under `ibfab exec`): TEMPLATE (passthrough_multicast.yaml.in)
with COUNT messages, every host on ibfab0, groups as FAMILY (ipv4, ipv6)
addresses. Every record as the scenario makes it: the joins' events and
their fields (the MGID the kernel's mapping gives), the sends'
completions, each receiver's messages (sender, step, sequence numbers in
order, length, GRH, source QP, payload), the leaves, and the summary. The
join to ff12:a01b::5 fails as the scenario expects with ipv6 (the SA
refuses that MGID, used as it is: exit 0); with ipv4 it is 239.0.0.5,
which the SA takes, so that step is not ok (exit 1). multicast-run: ipv4
through `IBFAB run SCENARIO --passthrough MAP`, the records read from its
stdout.
shortfall (under `ibfab exec`): an expect that more arrives than was sent
becomes an outcome after --timeout-ms, exit 1, not a hang.
refuse: a scenario action that cannot pass through (CASE: link-down,
group-expect, non-member, mask, every-host, unmapped-host, bad-map): exit 2
and exactly one line naming the action and the scenario's line.
device (under `ibfab exec`): a device that does not exist, a port it does
not have, a port that is not ACTIVE, a port with no address to bind to
(CASE no-such-device, no-such-port, port-not-active, no-address): exit 2
and one line.
links: the binary needs libibverbs.so.1 and librdmacm.so.1 by SONAME,
with no run path that holds either, and the loader finds the system's
without LD_LIBRARY_PATH.
Prints what it ran and "passthrough_check: PASS" when every check holds.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MGID = "ff12:4001::1"
# The MGID rdma_cm joins on InfiniBand under RDMA_PS_UDP: ipv6_ib_mc_map (the broadcast group's scope and
# P_Key, signature 6001) of ff12:4001::1, or ip_ib_mc_map (4001) of 239.0.0.1.
MAPPED = {"ipv6": "ff12:6001:ffff::1", "ipv4": "ff12:4001:ffff::f00:1"}
HOSTS = "H1=ibfab0,H2=ibfab0,H3=ibfab0,H4=ibfab0"

problems = []


def check(what, got, want):
    if got != want:
        problems.append(f"{what}: got {got!r}, want {want!r}")


def run(passthrough, scenario_text, args, tmp, ibfab=None):
    """Runs PASSTHROUGH SCENARIO --out FILE ARGS, or with ibfab, `IBFAB run SCENARIO --passthrough MAP`
    (ARGS: --map MAP only) and its records from stdout."""
    path = os.path.join(tmp, "scenario.yaml")
    with open(path, "w") as f:
        f.write(scenario_text)
    out = os.path.join(tmp, "outcome.jsonl")
    cmd = [ibfab, "run", path, "--passthrough", args[1]] if ibfab else [passthrough, path, "--out", out] + args
    print("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE if ibfab else subprocess.STDOUT,
                       text=True, timeout=120)
    if ibfab:
        print(p.stderr, end="")
        with open(out, "w") as f:
            f.write(p.stdout)
    else:
        print(p.stdout, end="")
    records = []
    if os.path.exists(out):
        with open(out) as f:
            text = f.read()
        print(text[:20000] + ("" if text.endswith("\n") and len(text) <= 20000 else "\n"), end="")
        records = [json.loads(line) for line in text.splitlines()]
    return p, records


def check_join(r, host, state, step, family):
    check(f"step {step} head", (r["step"], r["host"], r["action"], r["mgid"], r["join_state"]),
          (step, host, "join", MGID, state))
    o = r["outcome"]
    check(f"step {step} call", o["call"], {"rc": 0, "errno": 0})
    e = o["event"]
    check(f"step {step} event", (e["type"], e["status"], e["mgid"]), ("RDMA_CM_EVENT_MULTICAST_JOIN", 0, MAPPED[family]))
    check(f"step {step} ah", (e["ah"]["is_global"], e["ah"]["dlid_set"], e["ah"]["port_num"]), (True, True, 1))
    check(f"step {step} qp_num, qkey", (e["qp_num"], e["qkey"]), ("0xffffff", "0x01234567"))  # RDMA_UDP_QKEY
    check(f"step {step} create_ah", e["create_ah"], {"rc": 0, "errno": 0})
    check(f"step {step} ok", r["ok"], True)


def check_received(r, host, step, total, sends):
    """sends: [(send step, count, size)], the messages this expect lists, in order."""
    check(f"step {step} head", (r["step"], r["host"], r["action"]), (step, host, "expect"))
    o = r["outcome"]
    check(f"step {step} counts", (o["expect"], o["received"], o["timed_out"]), (total, total, False))
    want = [{"from": "H1", "step": s, "seq": q, "status": "success", "opcode": "IBV_WC_RECV", "byte_len": 40 + size,
             "grh": True, "imm": None, "src_qp_is_sender": True, "intact": True}
            for s, count, size in sends for q in range(count)]
    got = o["messages"]
    check(f"step {step} number of messages", len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            problems.append(f"step {step} message {i}: got {g}, want {w}")
            break
    check(f"step {step} ok", r["ok"], True)


def multicast(passthrough, template, count, family, ibfab=None):
    with open(template) as f:
        text = f.read().replace("{count_plus_one}", str(count + 1)).replace("{count}", str(count))
    with tempfile.TemporaryDirectory() as tmp:
        p, records = run(passthrough, text, ["--map", HOSTS, "--timeout-ms", "20000", "--family", family], tmp, ibfab)
    ipv6 = family == "ipv6"
    check("exit status", p.returncode, 0 if ipv6 else 1)
    check("records", len(records), 13)
    if len(records) != 13:
        return
    check_join(records[0], "H2", "full", 0, family)
    check_join(records[1], "H3", "full", 1, family)
    check_join(records[2], "H1", "send-only-full", 2, family)
    r = records[3]
    check("step 3 head", (r["host"], r["mgid"]), ("H4", "ff12:a01b::5"))
    e = r["outcome"]["event"]
    check("step 3 outcome", (r["outcome"]["call"], r["outcome"]["expect"], r["outcome"]["other_events"]),
          ({"rc": 0, "errno": 0}, "RDMA_CM_EVENT_MULTICAST_ERROR", []))
    if ipv6:
        check("step 3 event", e, {"type": "RDMA_CM_EVENT_MULTICAST_ERROR", "status": -22})
    else:
        check("step 3 event", (e["type"], e["status"], e["mgid"]),
              ("RDMA_CM_EVENT_MULTICAST_JOIN", 0, "ff12:4001:ffff::f00:5"))
    check("step 3 ok", r["ok"], ipv6)
    for step, n, size in ((4, count, 256), (8, 1, 64)):
        r = records[step]
        check(f"step {step} head", (r["host"], r["action"], r["count"], r["size"]), ("H1", "send", n, size))
        o = r["outcome"]
        check(f"step {step} outcome", (o["posted"], o["post"], o["completions"], o["timed_out"]),
              (n, {"rc": 0, "errno": 0}, [{"status": "success", "opcode": "IBV_WC_SEND", "count": n}], False))
        check(f"step {step} ok", r["ok"], True)
    check_received(records[5], "H2", 5, count, [(4, count, 256)])
    check_received(records[6], "H3", 6, count, [(4, count, 256)])
    for step, host in ((7, "H3"), (11, "H1")):
        r = records[step]
        check(f"step {step}", (r["host"], r["action"], r["outcome"], r["ok"]),
              (host, "leave", {"call": {"rc": 0, "errno": 0}}, True))
    check_received(records[9], "H2", 9, count + 1, [(8, 1, 64)])
    check_received(records[10], "H3", 10, count, [])  # it left before the second send
    check("summary", records[12],
          {"summary": {"scenario": "passthrough-multicast", "steps": 12, "failed": 0 if ipv6 else 1}})
    check("times", [r["at"] for r in records[:12]], ["1.000ms"] * 4 + ["2.000ms", "3.000ms", "3.000ms", "4.000ms",
                                                                        "5.000ms", "6.000ms", "6.000ms", "7.000ms"])


SHORTFALL = """topology: fat-tree:2:4
actions:
  - {at: 0, join: {node: H2, mgid: "ff12:4001::1"}}
  - {at: 0, join: {node: H1, mgid: "ff12:4001::1", join-state: send-only-full}}
  - {at: 0, send: {node: H1, mgid: "ff12:4001::1", count: 1}}
  - {at: 0, expect: {node: H2, received: 2}}
"""


def shortfall(passthrough):
    with tempfile.TemporaryDirectory() as tmp:
        p, records = run(passthrough, SHORTFALL, ["--map", "H1=ibfab0,H2=ibfab0", "--timeout-ms", "1000"], tmp)
    check("exit status", p.returncode, 1)
    check("records", len(records), 5)
    if len(records) == 5:
        o = records[3]["outcome"]
        check("the expect", (o["expect"], o["received"], o["timed_out"], len(o["messages"]), records[3]["ok"]),
              (2, 1, True, 1, False))
        check("summary", records[4]["summary"]["failed"], 1)


def one_line(p, status, pattern):
    check("exit status", p.returncode, status)
    lines = p.stdout.splitlines()
    check("lines printed", len(lines), 1)
    if lines and not re.fullmatch(pattern, lines[0]):
        problems.append(f"the line {lines[0]!r} does not match {pattern!r}")


REFUSALS = {
    "link-down": ("  - {at: 1ms, link-down: \"L1[3]\"}\n",
                  r"ibfab-passthrough: .*scenario\.yaml:4: 'link-down' cannot pass through to a real device: "
                  r"it is a fault of the fabric, which only the model can inject"),
    "group-expect": ("  - {at: 1ms, expect: {group: \"ff12:4001::1\", members: 2}}\n",
                     r"ibfab-passthrough: .*scenario\.yaml:4: 'expect' cannot pass through to a real device: "
                     r"a group's membership is the SA's view, not the API's"),
    "non-member": ("  - {at: 1ms, join: {node: H2, mgid: \"ff12:4001::1\", join-state: non-member}}\n",
                   r"ibfab-passthrough: .*scenario\.yaml:4: 'join' cannot pass through to a real device: "
                   r"rdma_cm joins as a full member or a send-only full member only .*"),
    "mask": ("  - {at: 1ms, join: {node: H2, mgid: \"ff12:4001::1\", mask: 0x10003}}\n",
             r"ibfab-passthrough: .*scenario\.yaml:4: 'join' cannot pass through to a real device: "
             r"rdma_cm writes its own component mask \('mask'\)"),
    "every-host": ("  - {at: 1ms, join: {node: \"*\", mgid: \"ff12:4001::1\"}}\n",
                   r"ibfab-passthrough: .*scenario\.yaml:4: 'join' cannot pass through to a real device: "
                   r"node \"\*\" means every host of the model's topology: name the hosts"),
    "unmapped-host": ("  - {at: 1ms, join: {node: H7, mgid: \"ff12:4001::1\"}}\n",
                      r"ibfab-passthrough: .*scenario\.yaml:4: host 'H7' has no device in --map"),
    "bad-map": ("", r"ibfab-passthrough: --map: expected HOST=DEVICE\[:PORT\]\[@ADDRESS\], got 'H1'"),
}


def refuse(passthrough, case):
    action, pattern = REFUSALS[case]
    # A join first, which would run if the refusal came late: nothing may.
    text = "topology: fat-tree:2:4\nactions:\n  - {at: 0, join: {node: H1, mgid: \"ff12:4001::1\"}}\n" + action
    mapping = "H1" if case == "bad-map" else "H1=ibfab0,H2=ibfab0"
    with tempfile.TemporaryDirectory() as tmp:
        p, records = run(passthrough, text, ["--map", mapping], tmp)
    one_line(p, 2, pattern)
    check("records written", records, [])


def device(passthrough, case):
    text = "topology: fat-tree:2:4\nactions:\n  - {at: 0, join: {node: H1, mgid: \"ff12:4001::1\"}}\n"
    mapping, pattern = {
        "no-such-device": ("H1=mlx5_7", r"ibfab-passthrough: H1: device 'mlx5_7' does not exist "
                                         r"\(ibv_get_device_list: ibfab0\)"),
        "no-such-port": ("H1=ibfab0:2", r"ibfab-passthrough: H1: device 'ibfab0' has no port 2 \(it has 1\)"),
        # under `ibfab exec --no-device-view`: the host's IPoIB interface is not there to bind to
        "no-address": ("H1=ibfab0", r"ibfab-passthrough: H1: device 'ibfab0' port 1: no ipv4 address of the "
                                    r"machine binds rdma_cm to it \(rdma_bind_addr\): it has no such interface address"),
        # served with --sm none: no SM has brought the port up
        "port-not-active": ("H1=ibfab0", r"ibfab-passthrough: H1: device 'ibfab0' port 1 is not active "
                                         r"\(its state: init\)"),
    }[case]
    with tempfile.TemporaryDirectory() as tmp:
        p, records = run(passthrough, text, ["--map", mapping], tmp)
    one_line(p, 2, pattern)
    check("records written", records, [])


def links(passthrough):
    dyn = subprocess.run(["readelf", "-d", passthrough], stdout=subprocess.PIPE, text=True, check=True).stdout
    print(dyn)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dyn)
    for lib in ("libibverbs.so.1", "librdmacm.so.1"):
        check(f"NEEDED {lib}", lib in needed, True)
    # A sanitized build has a run path to clang's runtime: none may lead to a libibverbs or librdmacm.
    for path in re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library (?:rpath|runpath): \[(.*)\]", dyn):
        for d in path.split(":"):
            for lib in ("libibverbs.so.1", "librdmacm.so.1"):
                check(f"{lib} in the run path {d}", os.path.exists(os.path.join(d, lib)), False)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    ldd = subprocess.run(["ldd", passthrough], stdout=subprocess.PIPE, text=True, env=env, check=True).stdout
    print(ldd)
    for lib in ("libibverbs.so.1", "librdmacm.so.1"):
        m = re.search(rf"{re.escape(lib)} => (\S+)", ldd)
        check(f"{lib} found in the system's directories", bool(m and re.match(r"/(usr/)?lib", m.group(1))), True)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    mode, passthrough = sys.argv[1], sys.argv[2]
    if mode == "multicast" and len(sys.argv) == 6 and sys.argv[5] in ("ipv4", "ipv6"):
        multicast(passthrough, sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif mode == "multicast-run" and len(sys.argv) == 5:
        multicast(None, sys.argv[3], int(sys.argv[4]), "ipv4", ibfab=passthrough)
    elif mode == "shortfall":
        shortfall(passthrough)
    elif mode == "refuse" and len(sys.argv) == 4 and sys.argv[3] in REFUSALS:
        refuse(passthrough, sys.argv[3])
    elif mode == "device" and len(sys.argv) == 4:
        device(passthrough, sys.argv[3])
    elif mode == "links":
        links(passthrough)
    else:
        print(__doc__)
        return 2
    for p in problems:
        print("passthrough_check: " + p)
    print("passthrough_check: " + ("FAIL" if problems else "PASS"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

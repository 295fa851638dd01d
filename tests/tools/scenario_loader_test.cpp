#include "tools/scenario/scenario_loader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ibfab::scenario {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of_at(const std::string& text, const std::string& path) {
  try {
    parse_scenario(text, path);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ScenarioLoader, ReadsEveryFieldAndSortsActionsByTime) {
  const Scenario s = parse_scenario(
      "name: x\n"
      "description: d\n"
      "topology: ring:4\n"
      "seed: 42\n"
      "duration: 2ms\n"
      "actions:\n"
      "  - {at: 1ms, link-down: \"S1[1]\"}\n"
      "  - {at: 10us, link-loss: \"S2[2]-S3[1]\", probability: 0.25}\n"
      "  - {at: 1ms, probe: H1}\n"
      "fingerprint: 00112233445566aa\n",
      "dir/s.yaml");
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.topology, "ring:4");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.duration, sim::Time::ms(2));
  ASSERT_EQ(s.actions.size(), 3u);
  EXPECT_EQ(s.actions[0].kind, Action::Kind::LinkLoss);
  EXPECT_EQ(s.actions[0].link.node, "S2");
  EXPECT_EQ(s.actions[0].link.port, 2);
  EXPECT_DOUBLE_EQ(s.actions[0].probability, 0.25);
  EXPECT_EQ(s.actions[1].kind, Action::Kind::LinkDown) << "same time: file order";
  EXPECT_EQ(s.actions[1].line, 7);
  EXPECT_EQ(s.actions[2].kind, Action::Kind::Probe);
  EXPECT_EQ(s.fingerprint, "00112233445566aa");
}

TEST(ScenarioLoader, NetFilePathsAreRelativeToTheScenario) {
  const Scenario s = parse_scenario("topology: nets/small.net\n", "/x/y/s.yaml");
  EXPECT_EQ(s.topology, "/x/y/nets/small.net");
}

TEST(ScenarioLoader, EveryMistakeNamesItsLine) {
  EXPECT_EQ(error_of("topology: ring:4\nsede: 3\n"),
            "s.yaml:2: unknown key 'sede' (known: name, description, topology, seed, scheduler, duration, sms, "
            "actions, fingerprint)");
  EXPECT_EQ(error_of("topology: ring:4\nscheduler: calendar\n"),
            "s.yaml:2: 'scheduler': unknown 'calendar' (known: heap, heap4, heap8, ladder)");
  EXPECT_EQ(error_of("topology: ring:4\nseed: -3\n"), "s.yaml:2: 'seed': expected an integer from 0 to 2^64-1, got '-3'");
  EXPECT_EQ(error_of("topology: ring:4\nduration: 5 parsecs\n"),
            "s.yaml:2: 'duration': bad time '5 parsecs' (examples: 0, 250ns, 10us, 1.5ms, 2s)");
  EXPECT_EQ(error_of("seed: 1\n"), "s.yaml:1: the scenario has no 'topology'");
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {at: 1ms, link-down: S1}\n"),
            "s.yaml:3: 'link-down': expected a link as NODE[PORT] or NODE[PORT]-NODE[PORT], got 'S1'");
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {link-down: \"S1[1]\"}\n"), "s.yaml:3: the action has no 'at' time");
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {at: 0, link-loss: \"S1[1]\"}\n"),
            "s.yaml:3: 'link-loss' needs a 'probability'");
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {at: 0, link-loss: \"S1[1]\", probability: 1.5}\n"),
            "s.yaml:3: 'probability' must be a number in [0, 1], got '1.5'");
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {at: 0, node-down: S1, node-up: S1}\n"),
            "s.yaml:3: one action per list item ('node-up' is a second one)");
  EXPECT_EQ(error_of("topology: ring:4\nduration: 1ms\nactions:\n  - {at: 2ms, node-down: S1}\n"),
            "s.yaml:4: action at 2.000ms is after the end of the run (duration 1.000ms)");
  EXPECT_EQ(error_of("topology: ring:4\nfingerprint: abc\n"),
            "s.yaml:2: 'fingerprint' must be 16 hex digits (write it with: ibfab run --update)");
  EXPECT_EQ(error_of("topology: [ring\n"), "s.yaml:2: not valid YAML: end of sequence flow not found");
  EXPECT_EQ(error_of("- a list\n"), "s.yaml:1: a scenario is a YAML map (topology:, actions:, ...)");
}

TEST(ScenarioLoader, SubnetManagers) {
  const Scenario s = parse_scenario(
      "topology: ring:4\nsms:\n  - {node: H2, routing: updn, priority: 3, at: 5us}\n  - {node: H3}\n", "s.yaml");
  ASSERT_EQ(s.sms.size(), 2u);
  EXPECT_EQ(s.sms[0].node, "H2");
  EXPECT_EQ(s.sms[0].routing, "updn");
  EXPECT_EQ(s.sms[0].priority, 3);
  EXPECT_EQ(s.sms[0].at, sim::Time::us(5));
  EXPECT_EQ(s.sms[1].routing, "minhop") << "OpenSM's default engine";
  EXPECT_EQ(error_of("topology: ring:4\nsms:\n  - {node: H1, routing: astrology}\n"),
            "s.yaml:3: 'routing': unknown engine 'astrology' (known: minhop, updn, ftree)");
  EXPECT_EQ(error_of("topology: ring:4\nsms:\n  - {routing: minhop}\n"),
            "s.yaml:3: the SM has no 'node' (the host it runs on)");
  EXPECT_EQ(error_of("topology: ring:4\nsms:\n  - {node: H1, priority: 16}\n"), "s.yaml:3: 'priority' is 0..15");
  EXPECT_EQ(error_of("topology: ring:4\nsms:\n  - {node: H1, mcast-root: tallest}\n"),
            "s.yaml:3: 'mcast-root': unknown multicast root selection 'tallest' (known: min-max-hop, least-loaded)");
  EXPECT_EQ(error_of("topology: ring:4\nsms: H1\n"),
            "s.yaml:2: 'sms' must be a list such as [{node: H1, routing: minhop}]");
}

TEST(ScenarioLoader, PartitionsOfAnSmInlineOrFromAFile) {
  const Scenario s = parse_scenario(
      "topology: ring:4\nsms:\n  - node: H1\n    partitions: |\n      T=0x8001,ipoib: ALL=full;\n", "s.yaml");
  ASSERT_TRUE(s.sms[0].partitions);
  EXPECT_EQ(s.sms[0].partitions->partitions.count(0x0001), 1u);
  // A file, relative to the scenario; its errors name the scenario's line,
  // then the file and its line.
  std::string dir = ::testing::TempDir();
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::ofstream(dir + "/p.conf") << "# tenants\nT=0x8001: 0xnothex;\n";
  EXPECT_EQ(error_of_at("topology: ring:4\nsms:\n  - {node: H1, partitions: p.conf}\n", dir + "/s.yaml"),
            dir + "/s.yaml:3: " + dir + "/p.conf:2: bad PortGUID '0xnothex'");
  EXPECT_EQ(error_of("topology: ring:4\nsms:\n  - {node: H1, partitions: \"T=1: SELF=maybe;\"}\n"),
            "s.yaml:3: partitions:1: unrecognized port flag 'maybe' (full, limited or both)");
  EXPECT_FALSE(parse_scenario("topology: ring:4\nsms:\n  - {node: H1}\n", "s.yaml").sms[0].partitions);
}

TEST(ScenarioLoader, MulticastActions) {
  const Scenario s = parse_scenario(
      "topology: ring:4\nduration: 9ms\nactions:\n"
      "  - {at: 1ms, join: {node: H2, mgid: \"ff12:4001::1\", join-state: send-only-full, qkey: 0x22, expect-status: 0x0200}}\n"
      "  - {at: 2ms, send: {node: H2, mgid: \"ff12:4001::1\", count: 5, size: 100}}\n"
      "  - {at: 3ms, leave: {node: H2, mgid: \"0\", join-state: 0x9}}\n"
      "  - {at: 4ms, expect: {group: \"ff12:4001::1\", exists: false}}\n"
      "  - {at: 4ms, expect: {node: H3, received: 5}}\n",
      "s.yaml");
  ASSERT_EQ(s.actions.size(), 5u);
  EXPECT_EQ(s.actions[0].kind, Action::Kind::Join);
  EXPECT_EQ(s.actions[0].node, "H2");
  EXPECT_EQ(s.actions[0].mcast.join_state, 0x8);
  EXPECT_EQ(s.actions[0].mcast.qkey, 0x22u);
  EXPECT_EQ(s.actions[0].mcast.expect_status, 0x0200);
  EXPECT_EQ(s.actions[1].mcast.count, 5u);
  EXPECT_EQ(s.actions[1].mcast.size, 100u);
  EXPECT_EQ(s.actions[2].mcast.join_state, 0x9);
  EXPECT_EQ(s.actions[3].expect.exists, false);
  EXPECT_EQ(s.actions[4].expect.received, 5u);
  const Scenario t = parse_scenario(
      "topology: ring:4\nactions:\n  - {at: 0, subscribe: {node: H3, trap: 66}}\n"
      "  - {at: 1ms, expect: {node: H3, trap: 66, reports: 1}}\n",
      "s.yaml");
  EXPECT_EQ(t.actions[0].kind, Action::Kind::Subscribe);
  EXPECT_EQ(t.actions[0].trap, 66);
  EXPECT_EQ(t.actions[1].expect.reports, 1u);
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {at: 0, subscribe: {node: H3}}\n"),
            "s.yaml:3: 'subscribe' is a map {node: H3, trap: 66}");
  const std::string head = "topology: ring:4\nactions:\n  - ";
  EXPECT_EQ(error_of(head + "{at: 0, join: {node: H2, mgid: \"ff12::zz\"}}\n"),
            "s.yaml:3: 'mgid': not a GID: 'ff12::zz' (example: ff12:601b::1, or 0 for one the SA assigns)");
  EXPECT_EQ(error_of(head + "{at: 0, join: {node: H2, mgid: \"ff12::1\", join-state: 16}}\n"),
            "s.yaml:3: 'join-state': full, non-member, send-only-non-member, send-only-full, or bits 0x1..0xf; got '16'");
  EXPECT_EQ(error_of(head + "{at: 0, join: {mgid: \"ff12::1\"}}\n"), "s.yaml:3: 'join' needs a 'node' (the host)");
  EXPECT_EQ(error_of(head + "{at: 0, send: {node: H1, mgid: \"ff12::1\", join-state: full}}\n"),
            "s.yaml:3: unknown key 'join-state' in 'send'");
  EXPECT_EQ(error_of(head + "{at: 0, send: {node: H1, mgid: \"ff12::1\", size: 5000}}\n"),
            "s.yaml:3: 'size': at most 4096, got 5000");
  EXPECT_EQ(error_of(head + "{at: 0, expect: {group: \"ff12::1\"}}\n"),
            "s.yaml:3: 'expect' checks a group ({group, exists and/or members}) or a host ({node, received} or "
            "{node, trap, reports})");
  EXPECT_EQ(error_of(head + "{at: 0, expect: {node: H1, members: 2}}\n"),
            "s.yaml:3: 'expect' checks a group ({group, exists and/or members}) or a host ({node, received} or "
            "{node, trap, reports})");
}

TEST(ScenarioLoader, QpActionsAndUnicastSends) {
  const Scenario s = parse_scenario(
      "topology: ring:4\nduration: 9ms\nactions:\n"
      "  - {at: 1ms, attach: {node: H2, mgid: \"ff12:4001::21\"}}\n"
      "  - {at: 2ms, detach: {node: H2, mgid: \"ff12:4001::21\"}}\n"
      "  - {at: 3ms, qp-state: {node: H2, state: rtr}}\n"
      "  - {at: 4ms, create-qp: {node: H2, block-self-mcast-lb: true}}\n"
      "  - {at: 5ms, send: {node: H1, to: H2, count: 4, size: 256, grh: true}}\n",
      "s.yaml");
  ASSERT_EQ(s.actions.size(), 5u);
  EXPECT_EQ(s.actions[0].kind, Action::Kind::Attach);
  EXPECT_EQ(s.actions[0].mcast.mgid, "ff12:4001::21");
  EXPECT_EQ(s.actions[1].kind, Action::Kind::Detach);
  EXPECT_EQ(s.actions[2].kind, Action::Kind::QpState);
  EXPECT_EQ(s.actions[2].qp_state, QpStateName::Rtr);
  EXPECT_EQ(s.actions[3].kind, Action::Kind::CreateQp);
  EXPECT_TRUE(s.actions[3].block_self_mcast_lb);
  EXPECT_EQ(s.actions[4].mcast.to, "H2");
  EXPECT_TRUE(s.actions[4].mcast.mgid.empty());
  EXPECT_TRUE(s.actions[4].mcast.grh);
  EXPECT_EQ(s.actions[4].mcast.count, 4u);
  // Each mistake: one line, with the file and the action's line.
  const std::string head = "topology: ring:4\nactions:\n  - {at: 0, probe: H1}\n  - ";
  EXPECT_EQ(error_of(head + "{at: 0, send: {node: H1, mgid: \"ff12::1\", to: H2}}\n"),
            "s.yaml:4: 'send' names a group ('mgid') or a host ('to', a unicast send), one of the two");
  EXPECT_EQ(error_of(head + "{at: 0, send: {node: H1, mgid: \"ff12::1\", grh: true}}\n"),
            "s.yaml:4: 'grh' belongs to a unicast send ('to'): multicast always has a GRH");
  EXPECT_EQ(error_of(head + "{at: 0, send: {node: H1, to: H2, grh: yes-please}}\n"),
            "s.yaml:4: 'grh' is true or false");
  EXPECT_EQ(error_of(head + "{at: 0, send: {node: H1, to: H1}}\n"), "s.yaml:4: 'send': 'H1' sends to itself ('to')");
  EXPECT_EQ(error_of(head + "{at: 0, qp-state: {node: H1, state: sqd}}\n"),
            "s.yaml:4: 'state': reset, init, rtr, rts or err; got 'sqd'");
  EXPECT_EQ(error_of(head + "{at: 0, qp-state: {node: H1}}\n"),
            "s.yaml:4: 'qp-state' is a map {node: H2, state: reset|init|rtr|rts|err}");
  EXPECT_EQ(error_of(head + "{at: 0, attach: {node: H1, mgid: \"0\"}}\n"),
            "s.yaml:4: 'attach' names a group by its MGID (not 0)");
  EXPECT_EQ(error_of(head + "{at: 0, detach: {node: H1}}\n"), "s.yaml:4: 'detach' needs an 'mgid'");
  EXPECT_EQ(error_of(head + "{at: 0, attach: {node: H1, mgid: \"ff12::1\", join-state: full}}\n"),
            "s.yaml:4: unknown key 'join-state' in 'attach'");
  EXPECT_EQ(error_of(head + "{at: 0, create-qp: {node: H1, loopback: false}}\n"),
            "s.yaml:4: unknown key 'loopback' in 'create-qp' (known: node, block-self-mcast-lb)");
  EXPECT_EQ(error_of(head + "{at: 0, create-qp: {node: H1, block-self-mcast-lb: 1}}\n"),
            "s.yaml:4: 'block-self-mcast-lb' is true or false");
}

TEST(ScenarioLoader, ConnectionsAndThePostsOnThem) {
  const Scenario s = parse_scenario(
      "topology: fat-tree:2:4\nduration: 9ms\nactions:\n"
      "  - {at: 1ms, connect: {node: H2, to: H1}}\n"
      "  - {at: 2ms, post: {node: H1, to: H2, op: write-imm, imm: 0x10, count: 300, size: 65536}}\n"
      "  - {at: 2ms, every: 1ms, until: 4ms, post: {node: H2, to: H1, op: read}}\n"
      "  - {at: 5ms, disconnect: {node: H1, to: H2}}\n"
      "  - {at: 6ms, post: {node: H1, to: H2, op: send}}\n"
      "  - {at: 7ms, connect: {node: H1, to: H2}}\n",
      "s.yaml");
  ASSERT_EQ(s.actions.size(), 6u);
  EXPECT_EQ(s.actions[0].kind, Action::Kind::Connect);
  EXPECT_EQ(s.actions[0].node, "H2");
  EXPECT_EQ(s.actions[0].conn.to, "H1");
  EXPECT_EQ(s.actions[1].kind, Action::Kind::Post);
  EXPECT_EQ(s.actions[1].conn.op, ConnSpec::Op::WriteImm);
  EXPECT_EQ(s.actions[1].conn.imm, 0x10u);
  EXPECT_EQ(s.actions[1].conn.count, 300u);
  EXPECT_EQ(s.actions[1].conn.size, 65536u);
  EXPECT_EQ(s.actions[2].conn.op, ConnSpec::Op::Read);
  EXPECT_EQ(s.actions[2].conn.count, 1u);
  EXPECT_EQ(s.actions[2].conn.size, 64u);
  EXPECT_EQ(s.actions[3].kind, Action::Kind::Disconnect);
  EXPECT_EQ(s.actions[4].conn.op, ConnSpec::Op::Send);  // after the disconnect: flushed, not refused
  EXPECT_EQ(s.actions[5].kind, Action::Kind::Connect);  // the pair again, the other way
  for (const ConnSpec::Op op : {ConnSpec::Op::Send, ConnSpec::Op::SendImm, ConnSpec::Op::Write,
                                ConnSpec::Op::WriteImm, ConnSpec::Op::Read})
    EXPECT_EQ(parse_scenario(std::string("topology: ring:4\nactions:\n  - {at: 0, connect: {node: H1, to: H2}}\n"
                                         "  - {at: 0, post: {node: H1, to: H2, op: ") +
                                 to_string(op) + "}}\n",
                             "s.yaml")
                  .actions[1]
                  .conn.op,
              op);
  // Each mistake: one line, with the file and the action's line.
  const std::string head = "topology: ring:4\nactions:\n  - {at: 0, connect: {node: H1, to: H2}}\n  - ";
  EXPECT_EQ(error_of(head + "{at: 0, post: {node: H1, to: H2, op: atomic}}\n"),
            "s.yaml:4: 'op': send, send-imm, write, write-imm or read; got 'atomic'");
  EXPECT_EQ(error_of(head + "{at: 0, post: {node: H1, to: H2, op: write, imm: 1}}\n"),
            "s.yaml:4: 'imm' belongs to op send-imm or write-imm");
  EXPECT_EQ(error_of(head + "{at: 0, post: {node: H1, to: H2, count: 0}}\n"), "s.yaml:4: 'count': at least 1");
  EXPECT_EQ(error_of(head + "{at: 0, post: {node: H1, to: H2, size: 1048577}}\n"),
            "s.yaml:4: 'size': at most 1048576, got 1048577");
  EXPECT_EQ(error_of(head + "{at: 0, post: {node: H1}}\n"), "s.yaml:4: 'post' needs a 'node' and a 'to' (the two hosts)");
  EXPECT_EQ(error_of(head + "{at: 0, connect: {node: H3, to: H3}}\n"), "s.yaml:4: 'connect': 'H3' is both ends ('to')");
  EXPECT_EQ(error_of(head + "{at: 0, connect: {node: H1, to: H2, op: send}}\n"),
            "s.yaml:4: unknown key 'op' in 'connect' (known: node, to, listen)");
  EXPECT_EQ(error_of(head + "{at: 0, disconnect: {node: H1, to: H2, listen: false}}\n"),
            "s.yaml:4: unknown key 'listen' in 'disconnect' (known: node, to)");
  EXPECT_EQ(error_of(head + "{at: 0, connect: {node: H3, to: H4, listen: maybe}}\n"), "s.yaml:4: 'listen' is true or false");
  EXPECT_EQ(error_of(head + "{at: 0, connect: {node: H3, to: H4, listen: false}}\n  - {at: 1ms, post: {node: H3, to: H4}}\n"),
            "s.yaml:5: 'post' needs a connection between H3 and H4 ('connect' before it)");
  EXPECT_EQ(error_of(head + "{at: 0, connect: {node: H2, to: H1}}\n"),
            "s.yaml:4: 'connect' H2 and H1 are connected already");
  EXPECT_EQ(error_of(head + "{at: 0, post: {node: H1, to: H3}}\n"),
            "s.yaml:4: 'post' needs a connection between H1 and H3 ('connect' before it)");
  EXPECT_EQ(error_of(head + "{at: 0, disconnect: {node: H2, to: H1}}\n  - {at: 1ms, disconnect: {node: H1, to: H2}}\n"),
            "s.yaml:5: 'disconnect' H1 and H2 are disconnected already");
  EXPECT_EQ(error_of(head + "{at: 0, every: 1ms, until: 2ms, disconnect: {node: H2, to: H1}}\n"),
            "s.yaml:4: 'disconnect' happens once: no 'every'");
  // Time orders them, not the file: a post written first but later is fine, one earlier is not.
  EXPECT_EQ(error_of("topology: ring:4\nactions:\n  - {at: 1ms, connect: {node: H1, to: H2}}\n"
                     "  - {at: 0, post: {node: H1, to: H2}}\n"),
            "s.yaml:4: 'post' needs a connection between H1 and H2 ('connect' before it)");
}

TEST(ScenarioLoader, LinkReferences) {
  LinkRef r;
  EXPECT_TRUE(parse_link_ref("L1[5]", r));
  EXPECT_EQ(r.node, "L1");
  EXPECT_EQ(r.port, 5);
  EXPECT_TRUE(parse_link_ref("L1[5]-S2[1]", r));
  EXPECT_EQ(r.node, "L1");
  for (const char* bad : {"L1", "[5]", "L1[]", "L1[0]", "L1[256]", "L1[5", "L1[5]x", "L1[5]-", "L1[5]-S2[1]-S3[2]"})
    EXPECT_FALSE(parse_link_ref(bad, r)) << bad;
}

TEST(ScenarioLoader, MissingFileIsOneClearLine) {
  try {
    load_scenario("/nonexistent/x.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.yaml: cannot open: No such file or directory");
  }
}

}  // namespace
}  // namespace ibfab::scenario

// ibfab-passthrough's plan (tools/passthrough/step_plan.h, host_map.h,
// json_line.h): the --map syntax, steps in time order with repetitions,
// and every refusal naming its action and line.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/passthrough/group_address.h"
#include "tools/passthrough/host_map.h"
#include "tools/passthrough/json_line.h"
#include "tools/passthrough/step_plan.h"
#include "tools/scenario/scenario_loader.h"

namespace ibfab::passthrough {
namespace {

std::string map_error(const std::string& text) {
  try {
    (void)parse_host_map(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PassthroughMap, DevicesPortsAndSharedPorts) {
  const HostMap m = parse_host_map("H1=rxe0,H2=mlx5_0:2,H3=rxe0");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.at("H1").device, "rxe0");
  EXPECT_EQ(m.at("H1").port, 1);
  EXPECT_EQ(m.at("H2").device, "mlx5_0");
  EXPECT_EQ(m.at("H2").port, 2);
  EXPECT_EQ(m.at("H3").device, "rxe0");
  EXPECT_EQ(m.at("H3").address, "");
  const HostMap a = parse_host_map("H1=ibfab0@10.1.0.1,H2=ibfab1:2@fd00:0:0:1::2");
  EXPECT_EQ(a.at("H1").device, "ibfab0");
  EXPECT_EQ(a.at("H1").address, "10.1.0.1");
  EXPECT_EQ(a.at("H2").device, "ibfab1");
  EXPECT_EQ(a.at("H2").port, 2);
  EXPECT_EQ(a.at("H2").address, "fd00:0:0:1::2");
}

TEST(PassthroughMap, BadEntriesSayWhich) {
  EXPECT_EQ(map_error("H1"), "--map: expected HOST=DEVICE[:PORT][@ADDRESS], got 'H1'");
  EXPECT_EQ(map_error("H1=rxe0,=rxe1"), "--map: expected HOST=DEVICE[:PORT][@ADDRESS], got '=rxe1'");
  EXPECT_EQ(map_error("H1=rxe0@10.1.0"), "--map: 'H1=rxe0@10.1.0': '10.1.0' is no IPv4 or IPv6 address");
  EXPECT_EQ(map_error("H1=@10.1.0.1"), "--map: 'H1=@10.1.0.1' names no device");
  EXPECT_EQ(map_error("H1=rxe0:0"), "--map: 'H1=rxe0:0': the port is a number from 1 to 255");
  EXPECT_EQ(map_error("H1=rxe0:1x"), "--map: 'H1=rxe0:1x': the port is a number from 1 to 255");
  EXPECT_EQ(map_error("H1=:1"), "--map: 'H1=:1' names no device");
  EXPECT_EQ(map_error("H1=rxe0,H1=rxe1"), "--map: host 'H1' is mapped twice");
  EXPECT_NE(map_error(""), "");
}

const HostMap kMap = {{"H1", {"rxe0", 1, ""}}, {"H2", {"rxe1", 1, ""}}};

std::string refusal(const std::string& action) {
  const scenario::Scenario s =
      scenario::parse_scenario("topology: fat-tree:2:4\nduration: 1s\nactions:\n" + action, "s.yaml");
  std::vector<std::string> hosts;
  try {
    (void)plan_steps(s, kMap, Family::Ipv6, hosts);
  } catch (const Refusal& e) {
    return e.what();
  }
  return "";
}

TEST(PassthroughPlan, RepetitionsMergeByTimeThenLine) {
  const scenario::Scenario s = scenario::parse_scenario(
      "topology: fat-tree:2:4\nduration: 1s\nactions:\n"
      "  - {at: 3ms, expect: {node: H2, received: 3}}\n"                        // line 4
      "  - {at: 1ms, every: 1ms, until: 3ms, send: {node: H1, mgid: \"ff12::1\"}}\n"  // line 5
      "  - {at: 0, join: {node: H2, mgid: \"ff12::1\"}}\n"                        // line 6
      "  - {at: 2ms, join: {node: H1, mgid: \"ff12::2\"}}\n",                     // line 7
      "s.yaml");
  std::vector<std::string> hosts;
  const std::vector<Step> steps = plan_steps(s, kMap, Family::Ipv6, hosts);
  std::vector<std::pair<int64_t, int>> got;
  for (const Step& st : steps) got.emplace_back(st.at.ps() / 1'000'000'000, st.action->line);
  // At 3 ms the expect (line 4) comes before the send's third repetition (line 5).
  const std::vector<std::pair<int64_t, int>> want = {{0, 6}, {1, 5}, {2, 5}, {2, 7}, {3, 4}, {3, 5}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(hosts, (std::vector<std::string>{"H1", "H2"}));
}

TEST(PassthroughPlan, WhatCannotPassThroughIsRefusedWithItsLine) {
  const std::string fault = "it is a fault of the fabric, which only the model can inject";
  const std::string states =
      "rdma_cm joins as a full member or a send-only full member only (join-state full or send-only-full)";
  const std::string keys = "rdma_cm chooses the Q_Key and P_Key of its joins ('qkey', 'pkey')";
  struct Case {
    const char* action;  // the list item
    const char* kind;    // the action's name in the message
    std::string why;
  };
  const Case cases[] = {
      {"{at: 0, link-up: \"L1[1]\"}", "link-up", fault},
      {"{at: 0, link-loss: \"L1[1]\", probability: 0.5}", "link-loss", fault},
      {"{at: 0, node-down: S1}", "node-down", fault},
      {"{at: 0, probe: H1}", "probe", "directed-route discovery needs the SM's view of the fabric"},
      {"{at: 0, sm-kill: H1}", "sm-kill", "the real fabric's SM is not the scenario's to stop"},
      {"{at: 0, subscribe: {node: H1, trap: 66}}", "subscribe", "trap subscriptions are the SA's, not the verbs API's"},
      {"{at: 0, expect: {group: \"ff12::1\", exists: false}}", "expect",
       "a group's membership is the SA's view, not the API's"},
      {"{at: 0, expect: {node: H1, trap: 66, reports: 1}}", "expect", "trap Reports are the SA's, not the verbs API's"},
      {"{at: 0, join: {node: H1, mgid: \"ff12::1\", join-state: send-only-non-member}}", "join", states},
      {"{at: 0, leave: {node: H1, mgid: \"ff12::1\", join-state: 0x9}}", "leave", states},
      {"{at: 0, join: {node: H1, mgid: \"ff12::1\", qkey: 5}}", "join", keys},
      {"{at: 0, join: {node: H1, mgid: \"ff12::1\", pkey: 0x8001}}", "join", keys},
      {"{at: 0, leave: {node: H1, mgid: \"ff12::1\", expect-status: 0x0200}}", "leave",
       "a leave's SA status does not reach rdma_cm ('expect-status')"},
      {"{at: 0, leave: {node: H1, mgid: \"ff12::1\", mask: 0x10003}}", "leave",
       "rdma_cm writes its own component mask ('mask')"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(refusal(std::string("  - ") + c.action + "\n"),
              std::string("s.yaml:4: '") + c.kind + "' cannot pass through to a real device: " + c.why);
  EXPECT_EQ(refusal("  - {at: 0, send: {node: H3, mgid: \"ff12::1\"}}\n"), "s.yaml:4: host 'H3' has no device in --map");
}

TEST(PassthroughPlan, TheFirstRefusalInTheFileIsTheOneSaid) {
  // In time order the probe comes first; in the file, the link-down.
  EXPECT_EQ(refusal("  - {at: 5ms, link-down: \"L1[1]\"}\n  - {at: 0, probe: H1}\n"),
            "s.yaml:4: 'link-down' cannot pass through to a real device: it is a fault of the fabric, which only "
            "the model can inject");
}

TEST(PassthroughPlan, WhatPassesThrough) {
  EXPECT_EQ(refusal("  - {at: 0, join: {node: H1, mgid: \"ff12::1\", join-state: send-only-full, expect-status: 0x200}}\n"
                    "  - {at: 0, join: {node: H2, mgid: \"0\"}}\n"
                    "  - {at: 0, send: {node: H1, mgid: \"ff12::1\", count: 3, size: 9}}\n"
                    "  - {at: 0, expect: {node: H2, received: 3}}\n"
                    "  - {at: 0, leave: {node: H1, mgid: \"ff12::1\", join-state: send-only-full}}\n"),
            "");
}

TEST(PassthroughPlan, TheQpActionsAndUnicastPassThroughAndTheReceiverNeedsADevice) {
  EXPECT_EQ(refusal("  - {at: 0, attach: {node: H1, mgid: \"ff12::1\"}}\n"
                    "  - {at: 0, detach: {node: H1, mgid: \"ff12::1\"}}\n"
                    "  - {at: 0, qp-state: {node: H2, state: err}}\n"
                    "  - {at: 0, create-qp: {node: H2, block-self-mcast-lb: true}}\n"
                    "  - {at: 0, send: {node: H1, to: H2, grh: true}}\n"),
            "");
  EXPECT_EQ(refusal("  - {at: 0, send: {node: H1, to: H3}}\n"), "s.yaml:4: host 'H3' has no device in --map");
}

TEST(PassthroughPlan, ConnectionsPassThroughAndTheFarEndNeedsADevice) {
  EXPECT_EQ(refusal("  - {at: 0, connect: {node: H1, to: H2}}\n"
                    "  - {at: 0, post: {node: H2, to: H1, op: read, count: 3}}\n"
                    "  - {at: 0, disconnect: {node: H2, to: H1}}\n"),
            "");
  // H3 never acts: it only listens and accepts, and still needs its device.
  EXPECT_EQ(refusal("  - {at: 0, connect: {node: H1, to: H3}}\n"), "s.yaml:4: host 'H3' has no device in --map");
}

TEST(PassthroughPlan, AProcessSharingTheRunTakesItsHostsAndNoConnectionToThePeers) {
  const HostMap map = {{"H1", {"rxe0", 1, ""}}, {"H2", {"rxe0", 1, ""}}, {"H3", {"rxe0", 1, ""}}};
  const auto split = [&](const std::string& actions, const std::string& local) -> std::string {
    const scenario::Scenario s =
        scenario::parse_scenario("topology: fat-tree:2:4\nduration: 1s\nactions:\n" + actions, "s.yaml");
    std::vector<std::string> hosts;
    try {
      const std::vector<Step> steps = plan_steps(s, map, Family::Ipv4, hosts);
      std::string out;
      for (const std::string& h : split_hosts(s, steps, map, hosts, local)) out += (out.empty() ? "" : ",") + h;
      return out;
    } catch (const Refusal& e) {
      return e.what();
    }
  };
  const std::string sends = "  - {at: 0, send: {node: H1, to: H2}}\n  - {at: 0, send: {node: H3, to: H1}}\n";
  EXPECT_EQ(split(sends, "H3,H1"), "H1,H3");  // in the run's order
  EXPECT_EQ(split(sends, "H2"), "H2");
  EXPECT_EQ(split("  - {at: 0, send: {node: H1, to: H2}}\n", "H3"), "");  // mapped, with nothing to do
  EXPECT_EQ(split(sends, "H1,H9"), "--hosts: 'H9' has no device in --map");
  EXPECT_EQ(split("  - {at: 0, connect: {node: H1, to: H3}}\n", "H1,H3"), "H1,H3");
  EXPECT_EQ(split("  - {at: 0, connect: {node: H1, to: H3}}\n", "H1"),
            "s.yaml:4: 'connect' cannot pass through to a real device: a connection between a host of this process "
            "and one of the peer's (--hosts) does not pass through yet");
}

TEST(PassthroughPlan, TooManyRepetitionsAreRefused) {
  EXPECT_EQ(refusal("  - {at: 0, every: 1us, until: 1s, send: {node: H1, mgid: \"ff12::1\"}}\n"),
            "s.yaml:4: more than 100000 steps (repetitions included), the most a passthrough run takes");
}

TEST(PassthroughGroups, AnMgidAsAnIpv4OrIpv6Address) {
  EXPECT_EQ(address_text(group_address("ff12:4001::1", Family::Ipv6)), "ff12:4001::1");
  EXPECT_EQ(address_text(group_address("ff12:4001::1", Family::Ipv4)), "239.0.0.1");
  EXPECT_EQ(address_text(group_address("ff15::aa:bb:cc", Family::Ipv4)), "239.187.0.204");
  EXPECT_EQ(address_text(group_address("ff12::12:3456", Family::Ipv4)), "239.18.52.86");
  EXPECT_EQ(address_text(group_address("0", Family::Ipv4)), "0.0.0.0");
  EXPECT_EQ(address_text(group_address("0", Family::Ipv6)), "::");
  EXPECT_EQ(parse_family("ipv4"), Family::Ipv4);
  EXPECT_EQ(parse_family("ipv6"), Family::Ipv6);
  EXPECT_EQ(parse_family("inet"), std::nullopt);
}

TEST(PassthroughGroups, TheMgidRdmaCmJoinsForAnAddressOnEachLinkLayer) {
  const auto text = [](const in6_addr& g) {
    char buf[INET6_ADDRSTRLEN];
    return std::string(inet_ntop(AF_INET6, &g, buf, sizeof buf));
  };
  // InfiniBand: ip_ib_mc_map (P_Key ffff, the low 28 bits) signed by rdma_cm.
  EXPECT_EQ(text(rdma_cm_mgid(group_address("ff12:4001::1", Family::Ipv4), true)), "ff12:4001:ffff::f00:1");
  EXPECT_EQ(text(rdma_cm_mgid(group_address("ff12::12:3456", Family::Ipv4), true)), "ff12:4001:ffff::f12:3456");
  EXPECT_EQ(text(rdma_cm_mgid(group_address("ff12:4001::1", Family::Ipv6), true)), "ff12:6001:ffff::1");
  // RoCE: the IPv4-mapped address, or the IPv6 address itself.
  EXPECT_EQ(text(rdma_cm_mgid(group_address("ff12:4001::1", Family::Ipv4), false)), "::ffff:239.0.0.1");
  EXPECT_EQ(text(rdma_cm_mgid(group_address("ff12:4001::1", Family::Ipv6), false)), "ff12:4001::1");
}

TEST(PassthroughGroups, TwoGroupsOnOneIpv4AddressAreRefused) {
  const scenario::Scenario s = scenario::parse_scenario(
      "topology: fat-tree:2:4\nactions:\n"
      "  - {at: 0, join: {node: H1, mgid: \"ff12:4001::1\"}}\n"
      "  - {at: 0, join: {node: H2, mgid: \"ff12:4002::1\"}}\n",
      "s.yaml");
  std::vector<std::string> hosts;
  EXPECT_EQ(plan_steps(s, kMap, Family::Ipv6, hosts).size(), 2u);
  try {
    (void)plan_steps(s, kMap, Family::Ipv4, hosts);
    ADD_FAILURE() << "not refused";
  } catch (const Refusal& e) {
    EXPECT_STREQ(e.what(), "s.yaml:4: groups 'ff12:4001::1' and 'ff12:4002::1' are both 239.0.0.1 with --family ipv4 "
                           "(239. and an MGID's last three bytes)");
  }
}

TEST(PassthroughJson, KeysInOrderAndStringsEscaped) {
  JsonObject o;
  o.add("b", 1).add("a", "x\"y\\z\n").add("t", true).add_null("n").add("o", JsonObject().add("q", hex(0x1234567, 8)));
  EXPECT_EQ(o.str(), R"({"b":1,"a":"x\"y\\z\u000a","t":true,"n":null,"o":{"q":"0x01234567"}})");
}

}  // namespace
}  // namespace ibfab::passthrough

#pragma once
// Reads a scenario file (YAML):
//
//   name: quickstart                 # optional, defaults to the file name
//   description: "..."               # optional
//   topology: fat-tree:2:4           # a spec, or a net-file path relative to this file
//   seed: 1                          # optional, default 1
//   scheduler: heap                  # optional: heap (default), heap4, heap8, ladder
//   duration: 10ms                   # simulated time to run; default 1ms
//   sms:                             # optional: Subnet Managers
//     - {node: H1, routing: minhop, at: 0}   # port 1 unless `port: 2`
//   actions:                         # optional, any order; run by time
//     - {at: 1ms, link-down: "S1[3]"}
//     - {at: 2ms, link-up: "S1[3]"}
//     - {at: 3ms, node-down: S2}
//     - {at: 4ms, node-up: S2}
//     - {at: 0, link-loss: "L1[5]", probability: 0.01}
//     - {at: 5ms, probe: H1}         # directed-route discovery from host H1
//     - {at: 1s, sm-kill: H1}        # the SM on H1 stops
//     - {at: 1ms, join: {node: H2, mgid: "ff12:4001::1", join-state: full}}  # also qkey, pkey,
//     - {at: 4ms, leave: {node: H2, mgid: "ff12:4001::1"}}  # mask, expect-status
//     - {at: 2ms, send: {node: H3, mgid: "ff12:4001::1", count: 4, size: 256}}   # multicast
//     - {at: 2ms, send: {node: H1, to: H2, count: 4, size: 256, grh: true}}     # unicast UD
//     - {at: 3ms, attach: {node: H2, mgid: "ff12:4001::1"}}   # ibv_attach_mcast
//     - {at: 3ms, detach: {node: H2, mgid: "ff12:4001::1"}}   # ibv_detach_mcast
//     - {at: 3ms, qp-state: {node: H2, state: rts}}           # reset, init, rtr, rts, err
//     - {at: 3ms, create-qp: {node: H2, block-self-mcast-lb: true}}
//     - {at: 3ms, connect: {node: H1, to: H2}}                 # RC through rdma_cm (listen: false:
//                                                             # H2 does not listen, REJ)
//     - {at: 4ms, post: {node: H1, to: H2, op: write, count: 4, size: 4096}}  # also send,
//                                       # send-imm, write-imm (with imm), read
//     - {at: 5ms, disconnect: {node: H1, to: H2}}
//     - {at: 0, subscribe: {node: H8, trap: 66}}
//     - {at: 5ms, expect: {node: H2, received: 4}}            # or {group, exists, members},
//                                                             # or {node, trap, reports}
//   Any action but probe repeats with `every: 1ms, until: 9ms`. Their
//   meaning: docs/SCENARIOS.md.
//   fingerprint: 0123456789abcdef    # golden run digest (ibfab run --update)
//
// Every problem is reported as one ScenarioError "FILE:LINE: problem" (the
// line of the offending key or value); unknown keys, a key given twice in
// one map and a number with a sign are errors too, so a typo never passes
// silently. The file must be a regular file of at most kMaxScenarioBytes.
#include <cstddef>
#include <stdexcept>
#include <string>

#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

// what() is one printable line: control characters of the message (a
// scenario's own text quoted in it, say) are written as \xNN.
class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(const std::string& message);
};

// The largest message a `post` takes (bytes).
inline constexpr uint32_t kMaxPostSize = 1u << 20;

// The largest scenario file read.
inline constexpr std::size_t kMaxScenarioBytes = std::size_t{16} << 20;

Scenario load_scenario(const std::string& path);
// Parses scenario text; `path` names it in messages and anchors relative
// net-file paths.
Scenario parse_scenario(const std::string& text, const std::string& path);

// Parses "NODE[PORT]" or "NODE[PORT]-NODE[PORT]" (the far end, when
// given, is kept to be checked against the cable): fabric/model/link_ref.h.
using fabric::parse_link_ref;

// Parses a probability, a number in [0, 1] ("0.25", "1e-3"); false on
// anything else.
bool parse_probability(const std::string& text, double& out);

// `text` with every control character as \xNN: a message that quotes input
// stays one printable line.
std::string printable(const std::string& text);

// Rewrites the scenario file's fingerprint line (or appends one).
void write_fingerprint(const std::string& path, const std::string& hex);

}  // namespace ibfab::scenario

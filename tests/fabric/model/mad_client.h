#pragma once
// Test helper: a MAD agent on an HCA port that sends one request at a time
// and runs the simulator until its answer comes back (or nothing is left
// to run). Plays the part an SM or a diagnostic tool plays for real.
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "fabric/mad/dr_smp.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::fabric::testing {

using Mad = std::array<uint8_t, 256>;

class MadClient : public MadAgent {
 public:
  MadClient(Fabric& f, Hca& hca, uint8_t mgmt_class, uint8_t class_version = 1, uint8_t port = 1)
      : fabric_(f), hca_(hca) {
    Hca::AgentSpec spec;
    spec.port = port;
    spec.mgmt_class = mgmt_class;
    spec.class_version = class_version;
    id_ = hca.register_agent(spec, this);
  }
  ~MadClient() override { hca_.unregister_agent(id_); }

  void on_mad(Port&, const MadAddress& from, std::span<const uint8_t> mad) override {
    Mad m;
    std::memcpy(m.data(), mad.data(), 256);
    received.push_back(m);
    sources.push_back(from);
  }

  // Sends `mad` and runs until an answer arrives; nullopt if none does.
  std::optional<Mad> request(const Mad& mad, const MadAddress& to = {}) {
    const std::size_t before = received.size();
    if (!hca_.send_mad(id_, to, mad)) return std::nullopt;
    while (received.size() == before && fabric_.sim().step()) {}
    if (received.size() == before) return std::nullopt;
    return received.back();
  }

  // A directed-route SMP request along `hops` (out-port numbers).
  static Mad dr_smp(uint8_t method, uint16_t attr, uint32_t mod, std::vector<uint8_t> hops) {
    Mad m{};
    mad::dr_smp::DrRequest r;
    r.method = method;
    r.transaction_id = 0x1234;
    r.attribute_id = attr;
    r.attribute_modifier = mod;
    mad::dr_smp::init_request(mad::SmpBuffer(m.data(), 256), r, hops);
    return m;
  }

  // A LID-routed SMP or GMP request header.
  static Mad request_mad(uint8_t mgmt_class, uint8_t version, uint8_t method, uint16_t attr, uint32_t mod) {
    Mad m{};
    m[0] = 1;
    m[1] = mgmt_class;
    m[2] = version;
    m[3] = method;
    wire::store_be64(&m[8], 0x55);
    wire::store_be16(&m[16], attr);
    wire::store_be32(&m[20], mod);
    return m;
  }

  static uint16_t status(const Mad& m) { return wire::load_be16(&m[4]) & 0x7FFF; }
  static std::span<const uint8_t> smp_data(const Mad& m) { return {m.data() + 64, 64}; }
  static std::span<uint8_t> smp_data(Mad& m) { return {m.data() + 64, 64}; }

  std::vector<Mad> received;
  std::vector<MadAddress> sources;

 private:
  Fabric& fabric_;
  Hca& hca_;
  uint32_t id_ = 0;
};

}  // namespace ibfab::fabric::testing

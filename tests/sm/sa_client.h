#pragma once
// Test helper: an SA client on an HCA's QP1 (class 0x03 version 2) that
// sends real SA MADs to the SA's LID and takes every MAD sent back to it,
// Reports (0x06) included, as a umad client registered for them would.
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/model/fabric.h"

namespace ibfab::sm::testing {

using Mad = std::array<uint8_t, 256>;

// A subscription to generic trap `trap` from any LID, type and producer.
inline mad::InformInfo trap_subscription(uint16_t trap) {
  mad::InformInfo ii;
  ii.lid_range_begin = mad::inform_info::kAllLids;
  ii.is_generic = 1;
  ii.subscribe = mad::inform_info::kSubscribe;
  ii.type = mad::inform_info::kAllTypes;
  ii.trap_number = trap;
  ii.producer_type = mad::inform_info::kAllProducers;
  return ii;
}

class SaClient : public fabric::MadAgent {
 public:
  SaClient(fabric::Fabric& f, fabric::Hca& hca, uint16_t sa_lid)
      : fabric_(f), hca_(hca), sa_lid_(sa_lid) {
    fabric::Hca::AgentSpec spec;
    spec.port = 1;
    spec.mgmt_class = mad::kSaClass;
    spec.class_version = mad::kSaClassVersion;
    spec.methods[0] = uint64_t{1} << wire::mad_method::kReport;
    id_ = hca.register_agent(spec, this);
  }
  ~SaClient() override { hca_.unregister_agent(id_); }

  void on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) override {
    Mad m;
    std::memcpy(m.data(), mad.data(), m.size());
    received.push_back(m);
    sources.push_back(from);
  }

  // A request MAD: init_sa_request plus `record` packed into the data.
  template <class R>
  static Mad make(uint8_t method, uint64_t mask, const R& record, uint64_t sm_key = 0,
                  uint64_t tid = 0x77) {
    Mad m{};
    mad::SaBuffer b(m.data(), m.size());
    mad::init_sa_request(b, method, R::kAttributeId, tid, mask, sm_key);
    record.pack(mad::mutable_sa_data(b));
    return m;
  }

  bool send(const Mad& m) {
    fabric::MadAddress to;
    to.lid = sa_lid_;
    to.qpn = 1;
    to.qkey = 0x80010000;
    return hca_.send_mad(id_, to, m);
  }
  // Runs until `n` MADs have arrived in all; false if the simulation ran dry first.
  bool wait_for(std::size_t n) {
    while (received.size() < n && fabric_.sim().step()) {}
    return received.size() >= n;
  }
  // Sends and runs until one more MAD arrives.
  std::optional<Mad> request(const Mad& m) {
    const std::size_t before = received.size();
    if (!send(m) || !wait_for(before + 1)) return std::nullopt;
    return received[before];
  }

  std::vector<Mad> received;
  std::vector<fabric::MadAddress> sources;

 private:
  fabric::Fabric& fabric_;
  fabric::Hca& hca_;
  uint16_t sa_lid_;
  uint32_t id_ = 0;
};

}  // namespace ibfab::sm::testing

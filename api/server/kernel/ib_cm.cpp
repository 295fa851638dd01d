#include "api/server/kernel/ib_cm.h"

#include <algorithm>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::api {
namespace {

// ib_cm's SIDR REQ: 4096 ms per try (CMA_CM_RESPONSE_TIMEOUT 20), 15 retries.
constexpr sim::Time kSidrTry = sim::Time::ms(4096);
constexpr unsigned kSidrRetries = 15;

uint32_t agent_key(const fabric::Hca& hca, uint8_t port) { return hca.index() << 8 | port; }

}  // namespace

// The CM agent on one port: SIDR REQ and REP arrive here.
class IbCm::Agent final : public fabric::MadAgent {
 public:
  Agent(IbCm& cm, fabric::Hca& hca, uint8_t port) : cm_(cm), hca_(hca), port_(port) {
    id_ = hca.register_agent({.port = port,
                              .mgmt_class = mad::kCmClass,
                              .class_version = mad::kCmClassVersion,
                              .methods = {uint64_t{1} << wire::mad_method::kSend, 0}},
                             this);
  }
  ~Agent() override { hca_.unregister_agent(id_); }
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;
  void on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) override {
    cm_.on_mad(hca_, port_, from, mad);
  }
  uint32_t id() const { return id_; }

 private:
  IbCm& cm_;
  fabric::Hca& hca_;
  uint8_t port_;
  uint32_t id_ = 0;
};

IbCm::IbCm(fabric::Fabric& fabric, User& user) : fabric_(fabric), user_(user) {}

IbCm::~IbCm() {
  for (auto& [request_id, o] : outstanding_) fabric_.sim().cancel(o.timer);
}

void IbCm::attach(fabric::Hca& hca, uint8_t port) {
  agents_[agent_key(hca, port)] = std::make_unique<Agent>(*this, hca, port);
}

uint32_t IbCm::agent_id(const fabric::Hca& hca, uint8_t port) const { return agents_.at(agent_key(hca, port))->id(); }

// --- Active side ------------------------------------------------------------

uint32_t IbCm::send_sidr_req(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& to, const mad::SidrReq& req,
                             uint32_t owner) {
  const uint32_t request_id = next_request_++;
  Outstanding& o = outstanding_[request_id];
  o.hca = &hca;
  o.port = port;
  o.to = to;
  o.req = req;
  o.req.request_id = request_id;
  o.owner = owner;
  transmit(request_id, o);
  return request_id;
}

void IbCm::transmit(uint32_t request_id, Outstanding& o) {
  o.hca->send_mad(agent_id(*o.hca, o.port), o.to, mad::make_cm_mad(request_id, o.req));
  o.timer = fabric_.sim().schedule(kSidrTry, [this, request_id] {
    auto it = outstanding_.find(request_id);
    if (it == outstanding_.end()) return;
    if (++it->second.tries <= kSidrRetries) return transmit(request_id, it->second);
    const uint32_t owner = it->second.owner;
    outstanding_.erase(it);
    user_.on_sidr_rep(owner, nullptr);
  });
}

void IbCm::cancel_sidr_req(uint32_t request_id) {
  auto it = outstanding_.find(request_id);
  if (it == outstanding_.end()) return;
  fabric_.sim().cancel(it->second.timer);
  outstanding_.erase(it);
}

void IbCm::sidr_rep(std::span<const uint8_t> mad) {
  const mad::SidrRep rep = mad::SidrRep::unpack(mad.subspan<mad::kCmDataOffset, mad::kCmDataSize>());
  auto it = outstanding_.find(rep.request_id);
  if (it == outstanding_.end()) return;
  const uint32_t owner = it->second.owner;
  fabric_.sim().cancel(it->second.timer);
  outstanding_.erase(it);
  user_.on_sidr_rep(owner, &rep);
}

// --- Passive side -----------------------------------------------------------

void IbCm::on_mad(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  if (mad.size() < wire::kMadSize || mad[3] != wire::mad_method::kSend) return;
  const uint16_t attribute = wire::load_be16(&mad[16]);
  if (attribute == mad::SidrReq::kAttributeId) sidr_req(hca, port, from, mad);
  else if (attribute == mad::SidrRep::kAttributeId) sidr_rep(mad);
}

void IbCm::sidr_req(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  const mad::SidrReq req = mad::SidrReq::unpack(mad.subspan<mad::kCmDataOffset, mad::kCmDataSize>());
  // A retry of a REQ still waiting for its answer.
  if (!held_.emplace(&hca, from.lid, req.request_id).second) return;
  SidrRequester r;
  r.hca = &hca;
  r.port = port;
  r.from = from;
  r.tid = wire::load_be64(&mad[8]);
  r.request_id = req.request_id;
  r.service_id = req.service_id;
  user_.on_sidr_req(r, req);
}

void IbCm::send_sidr_rep(const SidrRequester& to, uint8_t status, uint32_t qpn, uint32_t qkey,
                         std::span<const uint8_t> private_data) {
  held_.erase({to.hca, to.from.lid, to.request_id});
  mad::SidrRep rep;
  rep.request_id = to.request_id;
  rep.status = status;
  rep.qpn = qpn;
  rep.service_id = to.service_id;
  rep.q_key = qkey;
  std::copy_n(private_data.begin(), std::min(private_data.size(), rep.private_data.size()), rep.private_data.begin());
  to.hca->send_mad(agent_id(*to.hca, to.port), to.from, mad::make_cm_mad(to.tid, rep), /*keep_tid=*/true);
}

}  // namespace ibfab::api

#include "sm/sm_info_agent.h"

#include <array>
#include <cstring>
#include <stdexcept>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/smi.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::sm {
namespace {

constexpr uint64_t bit(uint8_t method) { return uint64_t{1} << method; }

}  // namespace

SmInfoAgent::SmInfoAgent(fabric::Hca& hca, uint8_t port, Handlers handlers)
    : hca_(hca), handlers_(std::move(handlers)) {
  fabric::Hca::AgentSpec spec;
  spec.port = port;
  spec.class_version = 1;
  spec.methods[0] = bit(wire::mad_method::kGet) | bit(wire::mad_method::kSet) | bit(wire::mad_method::kTrap);
  spec.mgmt_class = wire::mgmt_class::kSubnDirected;
  directed_ = hca.register_agent(spec, this);
  spec.mgmt_class = wire::mgmt_class::kSubnLid;
  lid_routed_ = hca.register_agent(spec, this);
  if (directed_ == 0 || lid_routed_ == 0) {
    if (directed_) hca.unregister_agent(directed_);
    if (lid_routed_) hca.unregister_agent(lid_routed_);
    throw std::runtime_error(hca.name() + ": another agent takes SMInfo/Trap on this port");
  }
}

SmInfoAgent::~SmInfoAgent() {
  hca_.unregister_agent(directed_);
  hca_.unregister_agent(lid_routed_);
}

void SmInfoAgent::on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  std::array<uint8_t, 256> reply;
  std::memcpy(reply.data(), mad.data(), reply.size());
  const bool directed = mad[1] == wire::mgmt_class::kSubnDirected;
  const uint8_t method = mad[3];
  const uint16_t attr = wire::load_be16(&mad[mad::dr_smp::kAttributeIdOffset]);
  const uint32_t modifier = wire::load_be32(&mad[mad::dr_smp::kAttributeModifierOffset]);
  const std::span<uint8_t> data(reply.data() + mad::dr_smp::kDataOffset, mad::dr_smp::kDataSize);
  uint16_t status = 0;
  if (method == wire::mad_method::kTrap) {
    ++traps_;
    if (handlers_.trap && attr == mad::Notice::kAttributeId)
      handlers_.trap(mad::Notice::unpack(std::span<const uint8_t>(data.data(), data.size())), from);
  } else if (attr != mad::SmInfo::kAttributeId) {
    status = wire::mad_status::kMethodAttrUnsupported;
  } else {
    if (method == wire::mad_method::kSet) {
      ++sets_;
      const mad::SmInfo requester = mad::SmInfo::unpack(std::span<const uint8_t>(data.data(), data.size()));
      if (handlers_.set) status = handlers_.set(modifier, requester);
    } else {
      ++gets_;
    }
    std::fill(data.begin(), data.end(), uint8_t{0});
    if (handlers_.info) handlers_.info().pack(data);
  }
  // The answer: GetResp, or TrapRepress for a Trap; a directed-route SMP
  // turns around along its return path.
  const uint8_t answer = method == wire::mad_method::kTrap ? wire::mad_method::kTrapRepress : wire::mad_method::kGetResp;
  if (directed) {
    const mad::SmpBuffer smp(reply.data(), 256);
    mad::smi_make_response(smp);
    mad::dr_smp::set_status(smp, status);
  } else {
    wire::store_be16(&reply[4], status);
  }
  reply[3] = answer;
  hca_.send_mad(directed ? directed_ : lid_routed_, from, reply);
}

}  // namespace ibfab::sm

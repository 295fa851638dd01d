#include "sm/sa/sa_agent.h"

#include <cstring>
#include <stdexcept>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/notice.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/inform_info_record.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/multi_path_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/sa_class_port_info.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/mad/sa/service_record.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/rmpp_header.h"
#include "sm/sa/link_records.h"
#include "sm/sa/multi_path_records.h"
#include "sm/sa/port_table_records.h"
#include "sm/sa/qos_table_records.h"
#include "sm/sa/node_records.h"
#include "sm/sa/path_records.h"
#include "sm/sa/port_info_records.h"
#include "sm/sa/sm_info_records.h"
#include "sm/sa/switch_records.h"

namespace ibfab::sm {
namespace {

namespace method = wire::mad_method;
namespace status = wire::mad_status;
namespace attr = wire::sa_attr;
using wire::RmppHeader;

bool known_attribute(uint16_t a) {
  switch (a) {
    case attr::kClassPortInfo: case attr::kInformInfo:
    case attr::kNodeRecord: case attr::kPortInfoRecord: case attr::kSwitchInfoRecord:
    case attr::kLinearForwardingTableRecord: case attr::kMulticastForwardingTableRecord:
    case attr::kSmInfoRecord: case attr::kLinkRecord: case attr::kGuidInfoRecord:
    case attr::kServiceRecord: case attr::kPKeyTableRecord: case attr::kPathRecord:
    case attr::kMcMemberRecord: case attr::kMultiPathRecord: case attr::kInformInfoRecord:
    case attr::kSlToVlTableRecord: case attr::kVlArbitrationTableRecord:
      return true;
    default:
      return false;
  }
}

uint8_t response_method(uint8_t m) {
  switch (m) {
    case method::kSet: return method::kGetResp;
    case method::kDelete: return method::kDeleteResp;
    default: return static_cast<uint8_t>(m | method::kResponseBit);
  }
}

// One record, padded to its AttributeOffset, on the stack.
template <class R>
std::array<uint8_t, std::size_t{R::kAttributeOffset} * 8> packed(const R& r) {
  std::array<uint8_t, std::size_t{R::kAttributeOffset} * 8> b{};
  r.pack(b);
  return b;
}

mad::ConstSaBuffer as_sa(std::span<const uint8_t> m) {
  return mad::ConstSaBuffer(m.data(), wire::kMadSize);
}

}  // namespace

SaAgent::SaAgent(fabric::Hca& hca, uint8_t port, const Subnet& subnet, McastGroups& groups,
                 SaOptions options)
    : hca_(&hca),
      sim_(&hca.fabric().sim()),
      subnet_(&subnet),
      groups_(&groups),
      options_(options),
      rmpp_(hca.fabric().sim(),
            [this](const fabric::MadAddress& to, std::span<const uint8_t> m) { send(to, m); },
            options.rmpp) {
  fabric::Hca::AgentSpec spec;
  spec.port = port;
  spec.mgmt_class = mad::kSaClass;
  spec.class_version = mad::kSaClassVersion;
  for (uint8_t m : {method::kGet, method::kSet, method::kGetTable, method::kDelete,
                    method::kGetMulti})
    spec.methods[m / 64] |= uint64_t{1} << (m % 64);
  id_ = hca.register_agent(spec, this);
  if (id_ == 0) throw std::runtime_error("the SA class is already taken on this port");
  groups.on_trap = [this](uint16_t trap, const McastGroup& g) {
    report(trap, g.rec.mgid, g.rec.p_key);
  };
}

SaAgent::~SaAgent() {
  groups_->on_trap = nullptr;
  for (auto& [tid, r] : reports_) sim_->cancel(r.timer);
  hca_->unregister_agent(id_);
}

void SaAgent::set_serving(bool on) {
  serving_ = on;
  if (on) groups_->ensure_well_known();
}

void SaAgent::send(const fabric::MadAddress& to, std::span<const uint8_t> mad) {
  ++metrics_.mads_sent;
  hca_->send_mad(id_, to, mad);
}

void SaAgent::on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  handle(from, mad);
}

void SaAgent::handle(const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  ++metrics_.mads_received;
  if (mad.size() < wire::kMadSize) return drop();
  if (mad[1] != mad::kSaClass || mad[2] != mad::kSaClassVersion) return drop();
  const uint8_t m = mad[3];
  if (m == method::kReportResp) return report_resp(mad);
  if (m & method::kResponseBit) return drop();
  // RMPP ACK / STOP / ABORT for a GetTable response: not a new query.
  const uint8_t rmpp_flags = mad[RmppHeader::kOffset + 2] & 0x7;
  if (mad[RmppHeader::kOffset] != 0 && (rmpp_flags & RmppHeader::kFlagActive)) {
    const uint8_t type = mad[RmppHeader::kOffset + 1];
    if (type == RmppHeader::kTypeAck || type == RmppHeader::kTypeStop ||
        type == RmppHeader::kTypeAbort)
      return static_cast<void>(rmpp_.on_rmpp(from.lid, mad));
    // A request sent by RMPP (GetMulti): one segment is taken, ACKed as
    // the receiving MAD layer does; longer ones are dropped.
    const uint8_t whole = RmppHeader::kFlagActive | RmppHeader::kFlagFirst | RmppHeader::kFlagLast;
    if (type != RmppHeader::kTypeData || rmpp_flags != whole ||
        wire::load_be32(&mad[RmppHeader::kOffset + 4]) != 1)
      return drop();
    ack_request(from, mad);
  }
  request(from, mad);
}

void SaAgent::ack_request(const fabric::MadAddress& to, std::span<const uint8_t> req) {
  Mad ack;
  std::memcpy(ack.data(), req.data(), wire::kMadSize);
  ack[3] = static_cast<uint8_t>(req[3] ^ method::kResponseBit);
  RmppHeader h;
  h.version = RmppHeader::kVersion;
  h.type = RmppHeader::kTypeAck;
  h.flags = RmppHeader::kFlagActive;
  h.data1 = 1;  // the segment received
  h.data2 = 1;  // NewWindowLast
  wire::Writer w(std::span<uint8_t>(ack).subspan(RmppHeader::kOffset, RmppHeader::kSize));
  h.pack(w);
  std::fill(ack.begin() + RmppHeader::kOffset + RmppHeader::kSize, ack.end(), uint8_t{0});
  send(to, ack);
}

void SaAgent::reply(const fabric::MadAddress& to, std::span<const uint8_t> req, uint16_t st,
                    std::span<const uint8_t> record, uint16_t attr_offset) {
  Mad out;
  std::memcpy(out.data(), req.data(), wire::kMadSize);
  mad::SaBuffer b(out.data(), wire::kMadSize);
  mad::set_sa_method(b, response_method(req[3]));
  mad::set_sa_status(b, st);
  mad::set_sa_sm_key(b, 0);
  std::memset(&out[RmppHeader::kOffset], 0, RmppHeader::kSize);
  if (st == status::kOk) {
    auto data = mad::mutable_sa_data(b);
    std::fill(data.begin(), data.end(), uint8_t{0});
    std::memcpy(data.data(), record.data(), std::min(record.size(), data.size()));
    mad::set_sa_attribute_offset(b, attr_offset);
  }
  ++metrics_.by_status[st];
  send(to, out);
}

template <class R, class Find>
void SaAgent::answer_query(const fabric::MadAddress& from, std::span<const uint8_t> mad, Find find) {
  const mad::ConstSaBuffer sa = as_sa(mad);
  const uint8_t m = mad[3];
  if (m != method::kGet && m != method::kGetTable)
    return reply(from, mad, status::kMethodAttrUnsupported);
  std::vector<R> found;
  find(R::unpack(mad::sa_data(sa)), mad::sa_component_mask(sa), found);
  records_.clear();
  for (const R& r : found) add_record(r);
  reply_records(from, mad, R::kAttributeOffset);
}

template <class R>
void SaAgent::add_record(const R& r) {
  const std::size_t at = records_.size();
  records_.resize(at + std::size_t{R::kAttributeOffset} * 8, 0);
  r.pack(std::span<uint8_t>(records_).subspan(at));
}

void SaAgent::reply_records(const fabric::MadAddress& to, std::span<const uint8_t> req,
                            uint16_t attr_offset, std::optional<uint16_t> attribute) {
  const std::size_t count = records_.size() / (std::size_t{attr_offset} * 8);
  if (req[3] == method::kGet) {
    if (count == 0) return reply(to, req, status::kSaNoRecords);
    if (count > 1) return reply(to, req, status::kSaTooManyRecords);
    return reply(to, req, status::kOk, records_, attr_offset);
  }
  // GetTable (and GetMulti): the records back to back, through RMPP.
  Mad head;
  std::memcpy(head.data(), req.data(), wire::kMadSize);
  mad::SaBuffer b(head.data(), wire::kMadSize);
  mad::set_sa_method(b, response_method(req[3]));
  if (attribute) mad::set_sa_attribute_id(b, *attribute);
  mad::set_sa_status(b, status::kOk);
  mad::set_sa_sm_key(b, 0);
  mad::set_sa_attribute_offset(b, count == 0 ? 0 : attr_offset);
  ++metrics_.by_status[status::kOk];
  rmpp_.start(to, head, std::vector<uint8_t>(records_));  // the transfer keeps its copy
}

void SaAgent::request(const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  if (!serving_) return drop();
  const mad::ConstSaBuffer sa = as_sa(mad);
  const uint64_t sm_key = mad::sa_sm_key(sa);
  if (sm_key != 0 && sm_key != options_.sa_key) return drop();
  auto rit = subnet_->port_by_lid.find(from.lid);
  if (rit == subnet_->port_by_lid.end()) return drop();
  const uint32_t requester = rit->second;
  const bool trusted = sm_key != 0;
  const uint16_t attribute = mad::sa_attribute_id(sa);
  if (!known_attribute(attribute)) return drop();
  const uint8_t m = mad[3];
  const bool query = m == method::kGet || m == method::kGetTable;
  const uint64_t mask = mad::sa_component_mask(sa);
  const auto data = mad::sa_data(sa);

  switch (attribute) {
    case attr::kMcMemberRecord:
      return mcmember(from, mad, requester, trusted);
    case attr::kClassPortInfo: {
      if (m != method::kGet) return reply(from, mad, status::kSaReqInvalid);
      mad::ClassPortInfo cpi;
      cpi.class_version = mad::opensm_sa_cpi::kClassVersion;
      cpi.capability_mask = mad::opensm_sa_cpi::kCapabilityMask;
      cpi.capability_mask2 = mad::opensm_sa_cpi::kCapabilityMask2;
      if (!groups_->options().send_only_full_member)
        cpi.capability_mask2 &= ~mad::sa_cap2::kIsSendOnlyFullMemberSupported;
      cpi.resp_time_value = mad::opensm_sa_cpi::kRespTimeValue;
      cpi.redirect_qp = mad::opensm_sa_cpi::kRedirectQp;
      cpi.redirect_q_key = mad::opensm_sa_cpi::kQp1QKey;
      cpi.trap_q_key = mad::opensm_sa_cpi::kQp1QKey;
      std::array<uint8_t, mad::ClassPortInfo::kSize> b{};
      cpi.pack(b);
      return reply(from, mad, status::kOk, b, mad::sa_attribute_offset_for(attribute));
    }
    case attr::kInformInfo:
      if (m != method::kSet) return reply(from, mad, status::kMethodAttrUnsupported);
      return inform_info(from, mad, requester, trusted);
    case attr::kPathRecord: {
      if (!query) return reply(from, mad, status::kMethodAttrUnsupported);
      const uint16_t st = path_records(*subnet_, *groups_, requester, mad::PathRecord::unpack(data),
                                       mask, options_.path_packet_life, paths_, m == method::kGet);
      if (st != status::kOk) return reply(from, mad, st);
      records_.clear();
      for (const auto& p : paths_) add_record(p);
      return reply_records(from, mad, mad::PathRecord::kAttributeOffset);
    }
    case attr::kNodeRecord:
      return answer_query<mad::NodeRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        node_records(*subnet_, requester, req, mk, out);
      });
    case attr::kPortInfoRecord: {
      const bool cap_match = (mad::sa_attribute_modifier(sa) & mad::kPirCapMaskMatchModifier) != 0;
      return answer_query<mad::PortInfoRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        port_info_records(*subnet_, requester, req, mk, cap_match, trusted, out);
      });
    }
    case attr::kLinkRecord:
      return answer_query<mad::LinkRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        link_records(*subnet_, requester, req, mk, out);
      });
    case attr::kSwitchInfoRecord:
      return answer_query<mad::SwitchInfoRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        switch_info_records(*subnet_, requester, req, mk, out);
      });
    case attr::kLinearForwardingTableRecord:
      return answer_query<mad::LftRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        lft_records(*subnet_, requester, req, mk, out);
      });
    case attr::kSlToVlTableRecord:
      return answer_query<mad::SlToVlTableRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        sl_to_vl_records(*subnet_, requester, req, mk, out);
      });
    case attr::kVlArbitrationTableRecord:
      return answer_query<mad::VlArbitrationTableRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        vl_arbitration_records(*subnet_, requester, req, mk, out);
      });
    case attr::kMultiPathRecord:
      return multi_path(from, mad, requester);
    case attr::kMulticastForwardingTableRecord:
      return answer_query<mad::MftRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        if (mfts_) mft_records(*subnet_, *mfts_, requester, req, mk, out);
      });
    case attr::kPKeyTableRecord:
      // P_KeyTableRecords go to trusted requesters only.
      if (query && mad::sa_sm_key(sa) != options_.sa_key) return reply(from, mad, status::kSaReqInvalid);
      return answer_query<mad::PKeyTableRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        pkey_table_records(*subnet_, requester, req, mk, out);
      });
    case attr::kGuidInfoRecord:
      return answer_query<mad::GuidInfoRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        guid_info_records(*subnet_, requester, req, mk, out);
      });
    case attr::kInformInfoRecord:
      return answer_query<mad::InformInfoRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        informs_.records(*subnet_, requester, req, mk, trusted, out);
      });
    case attr::kServiceRecord:
      return service(from, mad, requester);
    case attr::kSmInfoRecord:
      return answer_query<mad::SmInfoRecord>(from, mad, [&](const auto& req, uint64_t mk, auto& out) {
        sm_info_records(*subnet_, requester, req, mk, out);
      });
    default:
      return reply(from, mad, status::kMethodAttrUnsupported);
  }
}

void SaAgent::mcmember(const fabric::MadAddress& from, std::span<const uint8_t> mad,
                       uint32_t requester, bool trusted) {
  const mad::ConstSaBuffer sa = as_sa(mad);
  const uint64_t mask = mad::sa_component_mask(sa);
  const mad::McMemberRecord rec = mad::McMemberRecord::unpack(mad::sa_data(sa));
  const uint16_t offset = mad::McMemberRecord::kAttributeOffset;
  switch (mad[3]) {
    case method::kSet:
    case method::kDelete: {
      const bool join = mad[3] == method::kSet;
      const McastResult r = join ? groups_->join(requester, rec, mask)
                                 : groups_->leave(requester, rec, mask);
      if (r.status != status::kOk) return reply(from, mad, r.status);
      ++(join ? metrics_.joins : metrics_.leaves);
      return reply(from, mad, status::kOk, packed(r.record), offset);
    }
    case method::kGet:
    case method::kGetTable: {
      records_.clear();
      for (const auto& r : groups_->get(requester, rec, mask, trusted)) add_record(r);
      return reply_records(from, mad, offset);
    }
    default:
      return reply(from, mad, status::kMethodAttrUnsupported);
  }
}

void SaAgent::multi_path(const fabric::MadAddress& from, std::span<const uint8_t> mad,
                         uint32_t requester) {
  const mad::ConstSaBuffer sa = as_sa(mad);
  if (!(mad[RmppHeader::kOffset + 2] & RmppHeader::kFlagActive))
    return reply(from, mad, status::kSaReqInvalid);
  if (mad[3] != method::kGetMulti) return reply(from, mad, status::kMethodAttrUnsupported);
  const uint16_t st =
      multi_path_records(*subnet_, *groups_, requester, mad::MultiPathRecord::unpack(mad::sa_data(sa)),
                         mad::sa_component_mask(sa), options_.path_packet_life, paths_);
  if (st != status::kOk) return reply(from, mad, st);
  records_.clear();
  for (const auto& p : paths_) add_record(p);
  return reply_records(from, mad, mad::PathRecord::kAttributeOffset, mad::PathRecord::kAttributeId);
}

void SaAgent::service(const fabric::MadAddress& from, std::span<const uint8_t> mad,
                      uint32_t requester) {
  const mad::ConstSaBuffer sa = as_sa(mad);
  const uint64_t mask = mad::sa_component_mask(sa);
  const mad::ServiceRecord rec = mad::ServiceRecord::unpack(mad::sa_data(sa));
  // ServiceKey is shown to trusted requesters only.
  const bool show_key = mad::sa_sm_key(sa) != 0;
  const auto hide = [&](mad::ServiceRecord& r) {
    if (!show_key) r.service_key.fill(0);
  };
  const sim::Time now = sim_->now();
  switch (mad[3]) {
    case method::kSet:
    case method::kDelete: {
      mad::ServiceRecord answer;
      const uint16_t st = mad[3] == method::kSet
                              ? services_.set(*subnet_, requester, rec, mask, now, answer)
                              : services_.remove(*subnet_, requester, rec, mask, now, answer);
      if (st != status::kOk) return reply(from, mad, st);
      hide(answer);
      return reply(from, mad, status::kOk, packed(answer), mad::ServiceRecord::kAttributeOffset);
    }
    case method::kGet:
    case method::kGetTable: {
      std::vector<mad::ServiceRecord> found;
      services_.get(*subnet_, requester, rec, mask, now, found);
      records_.clear();
      for (mad::ServiceRecord& r : found) {
        hide(r);
        add_record(r);
      }
      return reply_records(from, mad, mad::ServiceRecord::kAttributeOffset);
    }
    default:
      return reply(from, mad, status::kMethodAttrUnsupported);
  }
}

void SaAgent::inform_info(const fabric::MadAddress& from, std::span<const uint8_t> mad,
                          uint32_t requester, bool trusted) {
  const mad::InformInfo info = mad::InformInfo::unpack(mad::sa_data(as_sa(mad)));
  mad::InformInfo stored;
  const uint16_t st = informs_.set(*subnet_, requester, from, info, trusted, stored);
  if (st != status::kOk) return reply(from, mad, st);
  return reply(from, mad, status::kOk, packed(stored), mad::InformInfo::kAttributeOffset);
}

void SaAgent::report(uint16_t trap, const wire::Gid& gid, std::optional<uint16_t> group_pkey) {
  mad::Notice n;
  n.is_generic = true;
  n.type = mad::notice_type::kSubnetManagement;
  n.producer_type = mad::producer_type::kClassManager;
  n.trap_number = trap;
  n.issuer_lid = subnet_->sm_lid;
  n.issuer_gid = wire::Gid::from(subnet_->prefix, subnet_->sm_port_guid).raw;
  n.set_details_gid(gid.raw);
  for (const Subscription* s : informs_.match(*subnet_, n, group_pkey)) {
    const uint32_t tid = next_report_tid_++;
    PendingReport p;
    p.to = s->to;
    p.to.qpn = s->info.qpn;
    p.mad.fill(0);
    mad::SaBuffer b(p.mad.data(), wire::kMadSize);
    mad::init_sa_request(b, method::kReport, mad::Notice::kAttributeId, tid, 0);
    n.pack(mad::mutable_sa_data(b));
    ++metrics_.reports_sent;
    send(p.to, p.mad);
    p.timer = sim_->schedule(options_.report_timeout, [this, tid] { report_timeout(tid); });
    reports_[tid] = p;
  }
}

void SaAgent::report_resp(std::span<const uint8_t> mad) {
  const uint32_t tid = static_cast<uint32_t>(mad::sa_tid(as_sa(mad)));
  auto it = reports_.find(tid);
  if (it == reports_.end()) return;
  sim_->cancel(it->second.timer);
  reports_.erase(it);
  ++metrics_.reports_acked;
}

void SaAgent::report_timeout(uint32_t tid) {
  auto it = reports_.find(tid);
  if (it == reports_.end()) return;
  PendingReport& p = it->second;
  if (++p.tries > options_.report_retries) {
    reports_.erase(it);
    ++metrics_.reports_abandoned;
    return;
  }
  ++metrics_.reports_resent;
  send(p.to, p.mad);
  p.timer = sim_->schedule(options_.report_timeout, [this, tid] { report_timeout(tid); });
}

}  // namespace ibfab::sm

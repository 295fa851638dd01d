// The CM's connection messages against Wireshark's CM dissector: one of
// each, packed by us with every field distinct (cm_samples.h), in a CM MAD
// on QP1 in a capture; every field tshark decodes must be the value we
// packed. Wireshark 4.0 dissects REQ, REP, RTU, REJ, DREQ and DREP field by
// field (and a REQ's private data as rdma_cm's IP header when the
// ServiceID is rdma_cm's); of MRA, LAP and APR it names the message only
// ("Dissector Not Implemented"), so for those the test checks the name and
// AttributeID.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "fabric/mad/cm_mad.h"
#include "fabric/wire/gid.h"
#include "tests/fabric/mad/cm_samples.h"
#include "tests/fabric/mad/tshark_fields.h"

namespace ibfab::mad {
namespace {

using testing::kTshark;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Bytes as tshark prints an FT_BYTES field: lower-case hex, no separators.
std::string hex_bytes(std::span<const uint8_t> b) {
  std::string s;
  char buf[3];
  for (uint8_t v : b) {
    std::snprintf(buf, sizeof buf, "%02x", v);
    s += buf;
  }
  return s;
}

// A GID as tshark prints an FT_IPv6 field.
std::string ipv6(const Gid& g) {
  wire::Gid w;
  w.raw = g;
  return w.str();
}

// `path`'s fields under tshark's names infiniband.cm.req.<prefix>_*: the
// primary path's GIDs are FT_IPv6, the alternate's FT_BYTES.
//
// Wireshark (4.0 and its master today) reads the word FlowLabel 31:12 |
// reserved 11:6 | PacketRate 5:0 with a 3-byte FlowLabel item and a
// 1-byte PacketRate item, both at the word's first byte: it shows the
// FlowLabel's top 12 bits (flow_label >> 8) and, as PacketRate, the low six
// bits of that first byte. The FlowLabel's top bits are checked in that
// form; the PacketRate and the whole word are pinned by cm_messages_test.cpp.
std::map<std::string, std::string> req_path_fields(const std::string& prefix, const CmPath& p, bool gids_as_ipv6) {
  const std::string f = "infiniband.cm.req." + prefix + "_";
  return {{f + "locallid", hex(p.local_lid)},
          {f + "remotelid", hex(p.remote_lid)},
          {f + "localgid", gids_as_ipv6 ? ipv6(p.local_gid) : hex_bytes(p.local_gid)},
          {f + "remotegid", gids_as_ipv6 ? ipv6(p.remote_gid) : hex_bytes(p.remote_gid)},
          {f + "flowlabel", hex(p.flow_label >> 8)},
          {f + "tfcclass", hex(p.traffic_class)},
          {f + "hoplim", hex(p.hop_limit)},
          {f + "sl", hex(p.sl)},
          {f + "subnetlocal", hex(p.subnet_local)},
          {f + "localacktout", hex(p.local_ack_timeout)}};
}

TEST(CmMessagesTshark, WiresharkDecodesTheMessagesAsPacked) {
  if (::access(kTshark, X_OK) != 0) GTEST_SKIP() << "tshark is not installed";
  const CmReq req = testing::sample_req();
  const CmMra mra = testing::sample_mra();
  const CmRep rep = testing::sample_rep();
  const CmRtu rtu = testing::sample_rtu();
  const CmRej rej = testing::sample_rej();
  const CmDreq dreq = testing::sample_dreq();
  const CmDrep drep = testing::sample_drep();
  const CmLap lap = testing::sample_lap();
  const CmApr apr = testing::sample_apr();
  // A REQ as rdma_cm sends it: an RDMA_PS_TCP ServiceID (0x0106, port
  // 20000) and, in the private data, rdma_cm's IP header (version 0, IP
  // version 4, source port, source and destination as IPv4-mapped
  // addresses) before 56 bytes of the consumer's data.
  CmReq rdma_cm_req = req;
  rdma_cm_req.service_id = 0x0000000001064e20ull;
  const std::vector<uint8_t> ip_header = {0x00, 0x40, 0x12, 0x34,                      // version, IPv4, port 0x1234
                                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 0, 1,  // source
                                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 0, 2}; // destination
  std::copy(ip_header.begin(), ip_header.end(), rdma_cm_req.private_data.begin());
  const std::span<const uint8_t> consumer_data = std::span<const uint8_t>(rdma_cm_req.private_data).subspan(36);
  const std::vector<CmMad> mads = {make_cm_mad(0x101, req),  make_cm_mad(0x102, mra), make_cm_mad(0x103, rep),
                                   make_cm_mad(0x104, rtu),  make_cm_mad(0x105, rej), make_cm_mad(0x106, dreq),
                                   make_cm_mad(0x107, drep), make_cm_mad(0x108, lap), make_cm_mad(0x109, apr),
                                   make_cm_mad(0x10a, rdma_cm_req)};
  const testing::Capture capture;
  ASSERT_EQ(capture.write(mads), "");

  std::map<std::string, std::string> want_req = {
      {"infiniband.cm.req", hex(req.local_comm_id)},
      {"infiniband.cm.req.serviceid", hex(req.service_id)},
      {"infiniband.cm.req.localcaguid", hex(req.local_ca_guid)},
      {"infiniband.cm.req.localqkey", hex(req.local_qkey)},
      {"infiniband.cm.req.localqpn", hex(req.local_qpn)},
      {"infiniband.cm.req.responderres", hex(req.responder_resources)},
      {"infiniband.cm.req.localeecn", hex(req.local_eecn)},
      {"infiniband.cm.req.initdepth", hex(req.initiator_depth)},
      {"infiniband.cm.req.remoteeecn", hex(req.remote_eecn)},
      {"infiniband.cm.req.remoteresptout", hex(req.remote_cm_response_timeout)},
      {"infiniband.cm.req.transpsvctype", hex(req.transport_service_type)},
      {"infiniband.cm.req.e2eflowctrl", hex(req.end_to_end_flow_control)},
      {"infiniband.cm.req.startpsn", hex(req.starting_psn)},
      {"infiniband.cm.req.localresptout", hex(req.local_cm_response_timeout)},
      {"infiniband.cm.req.retrcount", hex(req.retry_count)},
      {"infiniband.cm.req.pkey", hex(req.partition_key)},
      {"infiniband.cm.req.pppmtu", hex(req.path_mtu)},
      {"infiniband.cm.req.rdcexist", hex(req.rdc_exists)},
      {"infiniband.cm.req.rnrretrcount", hex(req.rnr_retry_count)},
      {"infiniband.cm.req.maxcmretr", hex(req.max_cm_retries)},
      {"infiniband.cm.req.srq", hex(req.srq)},
      {"infiniband.cm.req.ext_transport", hex(req.extended_transport_type)},
      {"infiniband.cm.req.private", hex_bytes(req.private_data)},
  };
  want_req.merge(req_path_fields("prim", req.primary_path, true));
  want_req.merge(req_path_fields("alt", req.alternate_path, false));
  const std::map<std::string, std::string> want_rep = {
      {"infiniband.cm.rep", hex(rep.local_comm_id)},
      {"infiniband.cm.rep.remotecommid", hex(rep.remote_comm_id)},
      {"infiniband.cm.rep.localqkey", hex(rep.local_qkey)},
      {"infiniband.cm.rep.localqpn", hex(rep.local_qpn)},
      {"infiniband.cm.rep.localeecn", hex(rep.local_eecn)},
      {"infiniband.cm.rep.startpsn", hex(rep.starting_psn)},
      {"infiniband.cm.rep.respres", hex(rep.responder_resources)},
      {"infiniband.cm.rep.initdepth", hex(rep.initiator_depth)},
      {"infiniband.cm.rep.tgtackdelay", hex(rep.target_ack_delay)},
      {"infiniband.cm.rep.failoveracc", hex(rep.failover_accepted)},
      {"infiniband.cm.rep.e2eflowctrl", hex(rep.end_to_end_flow_control)},
      {"infiniband.cm.rep.rnrretrcount", hex(rep.rnr_retry_count)},
      {"infiniband.cm.rep.srq", hex(rep.srq)},
      {"infiniband.cm.rep.localcaguid", hex(rep.local_ca_guid)},
      {"infiniband.cm.rep.private", hex_bytes(rep.private_data)},
  };
  const std::map<std::string, std::string> want_rtu = {
      {"infiniband.cm.rtu.localcommid", hex(rtu.local_comm_id)},
      {"infiniband.cm.rtu.remotecommid", hex(rtu.remote_comm_id)},
      {"infiniband.cm.rtu.private", hex_bytes(rtu.private_data)},
  };
  const std::map<std::string, std::string> want_rej = {
      {"infiniband.cm.rej.localcommid", hex(rej.local_comm_id)},
      {"infiniband.cm.rej.remotecommid", hex(rej.remote_comm_id)},
      {"infiniband.cm.rej.msgrej", hex(rej.message_rejected)},
      {"infiniband.cm.rej.rejinfolen", hex(rej.reject_info_length)},
      {"infiniband.cm.rej.reason", hex(static_cast<uint16_t>(rej.reason))},
      {"infiniband.cm.rej.ari", hex_bytes(rej.ari)},
      {"infiniband.cm.rej.private", hex_bytes(rej.private_data)},
  };
  const std::map<std::string, std::string> want_dreq = {
      {"infiniband.cm.dreq.localcommid", hex(dreq.local_comm_id)},
      {"infiniband.cm.dreq.remotecommid", hex(dreq.remote_comm_id)},
      {"infiniband.cm.req.remoteqpneecn", hex(dreq.remote_qpn_eecn)},
      {"infiniband.cm.dreq.private", hex_bytes(dreq.private_data)},
  };
  const std::map<std::string, std::string> want_drep = {
      {"infiniband.cm.drsp.localcommid", hex(drep.local_comm_id)},
      {"infiniband.cm.drsp.remotecommid", hex(drep.remote_comm_id)},
      {"infiniband.cm.drsp.private", hex_bytes(drep.private_data)},
  };
  const std::map<std::string, std::string> want_rdma_cm_req = {
      {"infiniband.cm.req.serviceid", hex(rdma_cm_req.service_id)},
      {"infiniband.cm.req.serviceid.protocol", "0x06"},
      {"infiniband.cm.req.serviceid.dport", "20000"},
      {"infiniband.cm.req.localqpn", hex(rdma_cm_req.local_qpn)},
      {"infiniband.cm.req.ip_cm.ipv", "4"},
      {"infiniband.cm.req.ip_cm.sport", "0x1234"},
      {"infiniband.cm.req.ip_cm.sip4", "192.168.0.1"},
      {"infiniband.cm.req.ip_cm.dip4", "192.168.0.2"},
      {"infiniband.cm.req.ip_cm.private", hex_bytes(consumer_data)},
  };
  const std::vector<std::map<std::string, std::string>> wants = {want_req,  want_rep,  want_rtu,        want_rej,
                                                                 want_dreq, want_drep, want_rdma_cm_req};
  std::vector<std::string> fields = {"infiniband.mad.mgmtclass", "infiniband.mad.classversion",
                                     "infiniband.mad.method", "infiniband.mad.attributeid",
                                     "infiniband.mad.transactionid"};
  for (const auto& w : wants)
    for (const auto& [f, v] : w) fields.push_back(f);
  const auto rows = testing::decode(capture.path(), fields);
  ASSERT_EQ(rows.size(), mads.size());

  // Every message: a CM Send of ClassVersion 2 with its AttributeID and TID.
  const uint16_t attrs[] = {cm_attr::kReq,  cm_attr::kMra,  cm_attr::kRep, cm_attr::kRtu, cm_attr::kRej,
                            cm_attr::kDreq, cm_attr::kDrep, cm_attr::kLap, cm_attr::kApr, cm_attr::kReq};
  for (std::size_t i = 0; i < rows.size(); ++i)
    testing::expect_fields(rows[i], i, {{"infiniband.mad.mgmtclass", "0x07"}, {"infiniband.mad.classversion", "0x02"},
                                        {"infiniband.mad.method", "0x03"}, {"infiniband.mad.attributeid", hex(attrs[i])},
                                        {"infiniband.mad.transactionid", hex(0x101 + i)}});
  testing::expect_fields(rows[0], 0, want_req);
  testing::expect_fields(rows[2], 2, want_rep);
  testing::expect_fields(rows[3], 3, want_rtu);
  testing::expect_fields(rows[4], 4, want_rej);
  testing::expect_fields(rows[5], 5, want_dreq);
  testing::expect_fields(rows[6], 6, want_drep);
  testing::expect_fields(rows[9], 9, want_rdma_cm_req);

  // MRA, LAP and APR: Wireshark names them by their AttributeID.
  const std::string text = testing::run_tshark(capture.path(), "-V");
  for (const char* name : {"CM MsgRcptAck", "CM LoadAlternatePath", "CM AlternatePathResponse"})
    EXPECT_NE(text.find(name), std::string::npos) << name << " missing from tshark -V";
}

}  // namespace
}  // namespace ibfab::mad

#pragma once
// Packets shared by the wire tests. The byte arrays were computed outside
// this code base (Python, crcmod for the CRCs) from the IBTA layouts and the
// masking rules of fabric/wire/crc.h.
#include <array>
#include <cstdint>
#include <span>

#include "fabric/wire/packet_codec.h"

namespace ibfab::wire::testing {

// UD SEND_ONLY with GRH: LRH VL0 SL0 DLID 0xC001 SLID 5; GRH TClass 0x12,
// FlowLabel 0x34567, HopLmt 0x40, SGID fe80::2:c903:0:1,
// DGID ff12:401b:ffff::ffff:ffff; BTH P_Key 0xffff DestQP 0xffffff PSN 1;
// DETH Q_Key 0x11111111 SrcQP 0x48; payload "hello!" (pad 2).
inline constexpr std::array<uint8_t, 82> kGlobalUdPacket = {
    0x00, 0x03, 0xc0, 0x01, 0x00, 0x14, 0x00, 0x05, 0x61, 0x23, 0x45, 0x67, 0x00, 0x20, 0x1b,
    0x40, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00,
    0x00, 0x01, 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff,
    0xff, 0xff, 0xff, 0x64, 0x20, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
    0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x48, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x00,
    0x00, 0x54, 0xf8, 0x1c, 0x43, 0xc2, 0x66};
inline constexpr uint32_t kGlobalUdIcrc = 0x431cf854;
inline constexpr uint16_t kGlobalUdVcrc = 0x66c2;

// RC SEND_ONLY, local: LRH VL3 SL5 DLID 7 SLID 3; BTH SE, P_Key 0x8001,
// FECN, BECN, DestQP 0x1234, AckReq, PSN 0xabcdef; payload 01..09 (pad 3).
inline constexpr std::array<uint8_t, 38> kLocalRcPacket = {
    0x30, 0x52, 0x00, 0x07, 0x00, 0x09, 0x00, 0x03, 0x04, 0xb0, 0x80, 0x01, 0xc0,
    0x00, 0x12, 0x34, 0x80, 0xab, 0xcd, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
    0x07, 0x08, 0x09, 0x00, 0x00, 0x00, 0x64, 0xdf, 0xbd, 0x88, 0x13, 0x63};
inline constexpr uint32_t kLocalRcIcrc = 0x88bddf64;
inline constexpr uint16_t kLocalRcVcrc = 0x6313;

inline constexpr std::array<uint8_t, 6> kHello = {'h', 'e', 'l', 'l', 'o', '!'};
inline constexpr std::array<uint8_t, 9> kNine = {1, 2, 3, 4, 5, 6, 7, 8, 9};

inline PacketSpec global_ud_spec() {
  PacketSpec s;
  s.lrh.dlid = 0xc001;
  s.lrh.slid = 5;
  Grh g;
  g.tclass = 0x12;
  g.flow_label = 0x34567;
  g.hop_limit = 0x40;
  g.sgid = *Gid::parse("fe80::2:c903:0:1");
  g.dgid = *Gid::parse("ff12:401b:ffff::ffff:ffff");
  s.grh = g;
  s.bth.opcode = opcode::kUdSendOnly;
  s.bth.pkey = 0xffff;
  s.bth.dest_qp = 0xffffff;
  s.bth.psn = 1;
  s.deth = Deth{0x11111111, 0x48};
  s.payload = kHello;
  return s;
}

inline PacketSpec local_rc_spec() {
  PacketSpec s;
  s.lrh.vl = 3;
  s.lrh.sl = 5;
  s.lrh.dlid = 7;
  s.lrh.slid = 3;
  s.bth.opcode = opcode::kRcSendOnly;
  s.bth.solicited_event = true;
  s.bth.pkey = 0x8001;
  s.bth.fecn = true;
  s.bth.becn = true;
  s.bth.dest_qp = 0x1234;
  s.bth.ack_req = true;
  s.bth.psn = 0xabcdef;
  s.payload = kNine;
  return s;
}

// A 256-byte directed-route SMP: SubnGet(NodeInfo), hop count 2, path 1,3.
inline std::array<uint8_t, kMadSize> dr_get_node_info(uint64_t tid) {
  std::array<uint8_t, kMadSize> mad{};
  MadHeader h;
  h.mgmt_class = mgmt_class::kSubnDirected;
  h.class_version = MadHeader::kSmpClassVersion;
  h.method = mad_method::kGet;
  h.tid = tid;
  h.attr_id = smp_attr::kNodeInfo;
  Writer w(mad);
  h.pack(w);
  SmpView v(mad);
  v.set_hop_count(2);
  v.set_m_key(0x0102030405060708ULL);
  v.set_dr_slid(0xffff);
  v.set_dr_dlid(0xffff);
  v.set_initial_path(1, 1);
  v.set_initial_path(2, 3);
  return mad;
}

// A 256-byte SA GetTable(MCMemberRecord) with component mask MGID|PortGID.
inline std::array<uint8_t, kMadSize> sa_get_table_mcmember(uint64_t tid) {
  std::array<uint8_t, kMadSize> mad{};
  MadHeader h;
  h.mgmt_class = mgmt_class::kSubnAdm;
  h.class_version = MadHeader::kSaClassVersion;
  h.method = mad_method::kGetTable;
  h.tid = tid;
  h.attr_id = sa_attr::kMcMemberRecord;
  Writer w(mad);
  h.pack(w);
  RmppHeader rmpp;
  rmpp.version = RmppHeader::kVersion;
  rmpp.pack(w);
  SaHeader sa;
  sa.attr_offset = 7;
  sa.comp_mask = 0x3;
  sa.pack(w);
  const Gid mgid = *Gid::parse("ff12:401b:ffff::1");
  w.bytes(mgid.raw.data(), Gid::kSize);
  return mad;
}

// A UD packet on QP0 (VL15, P_Key 0xffff, Q_Key 0) or QP1 (Q_Key 0x80010000)
// carrying `mad`.
inline PacketSpec mad_spec(std::span<const uint8_t> mad, uint32_t dest_qp, uint16_t dlid,
                           uint16_t slid) {
  PacketSpec s;
  s.lrh.vl = dest_qp == 0 ? Lrh::kVlManagement : 0;
  s.lrh.dlid = dlid;
  s.lrh.slid = slid;
  s.bth.opcode = opcode::kUdSendOnly;
  s.bth.pkey = 0xffff;
  s.bth.dest_qp = dest_qp;
  s.bth.psn = 0x10;
  s.deth = Deth{dest_qp == 0 ? 0u : Deth::kQp1QKey, dest_qp};
  s.payload = mad;
  return s;
}

}  // namespace ibfab::wire::testing

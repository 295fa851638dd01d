// The SA record codecs libibmad has no field table for, against
// Wireshark's InfiniBand dissector: each record goes, packed by us, into a
// SubnAdmGetResp on QP1 in a pcap, and every field tshark decodes must be
// the value we packed (distinct values per field, so that a field at the
// wrong offset reads as another field's value).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "fabric/mad/sa/guid_info_record.h"
#include "fabric/mad/sa/inform_info_record.h"
#include "fabric/mad/sa/lft_record.h"
#include "fabric/mad/sa/link_record.h"
#include "fabric/mad/sa/mft_record.h"
#include "fabric/mad/sa/pkey_table_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/mad/sa/sl_to_vl_table_record.h"
#include "fabric/mad/sa/sm_info_record.h"
#include "fabric/mad/sa/switch_info_record.h"
#include "fabric/mad/sa/vl_arbitration_table_record.h"
#include "tests/fabric/mad/tshark_fields.h"

namespace ibfab::mad {
namespace {

using testing::kTshark;

// A SubnAdmGetResp carrying `r`.
template <class R>
std::array<uint8_t, 256> get_resp(const R& r) {
  std::array<uint8_t, 256> m{};
  SaBuffer b(m.data(), m.size());
  init_sa_request(b, wire::mad_method::kGetResp, R::kAttributeId, 0x1234, 0);
  r.pack(mutable_sa_data(b));
  return m;
}

TEST(SaRecordTshark, WiresharkDecodesTheRecordsAsPacked) {
  if (::access(kTshark, X_OK) != 0) GTEST_SKIP() << "tshark is not installed";
  const testing::Capture capture;

  LinkRecord link{0x1234, 7, 9, 0x0abc};
  SwitchInfoRecord swi;
  swi.lid = 0x0102;
  swi.switch_info.linear_fdb_cap = 0xC000;
  swi.switch_info.random_fdb_cap = 0x0011;
  swi.switch_info.multicast_fdb_cap = 0x0200;
  swi.switch_info.linear_fdb_top = 0x0345;
  swi.switch_info.default_port = 3;
  swi.switch_info.default_multicast_primary_port = 4;
  swi.switch_info.default_multicast_not_primary_port = 5;
  swi.switch_info.life_time_value = 0x13;
  swi.switch_info.lids_per_port = 0x0021;
  swi.switch_info.partition_enforcement_cap = 0x0031;
  LftRecord lft;
  lft.lid = 0x0203;
  lft.block = 0x0011;
  for (std::size_t k = 0; k < 64; ++k) lft.lft.port[k] = static_cast<uint8_t>(k * 3 + 1);
  MftRecord mft;
  mft.lid = 0x0304;
  mft.position = 0xA;
  mft.block = 0x1A5;
  for (std::size_t k = 0; k < 32; ++k) mft.mft.port_mask[k] = static_cast<uint16_t>(0x1001 * (k + 1));
  SmInfoRecord smi;
  smi.lid = 0x0405;
  smi.sm_info.guid = 0x0002c90300000001ull;
  smi.sm_info.sm_key = 0x1122334455667788ull;
  smi.sm_info.act_count = 0x01020304;
  smi.sm_info.priority = 0xB;
  smi.sm_info.sm_state = 3;
  PKeyTableRecord pkr;
  pkr.lid = 0x0506;
  pkr.block = 0x0102;
  pkr.port = 0x21;
  for (std::size_t k = 0; k < 32; ++k) pkr.table.p_key[k] = static_cast<uint16_t>((k % 2 ? 0x8000 : 0) | (0x100 + k));
  SlToVlTableRecord slv;
  slv.lid = 0x0607;
  slv.input_port = 0x12;
  slv.output_port = 0x13;
  for (std::size_t sl = 0; sl < 16; ++sl) slv.table.vl[sl] = static_cast<uint8_t>((sl * 7) & 0xF);
  VlArbitrationTableRecord vla;
  vla.lid = 0x0708;
  vla.port = 0x14;
  vla.block = 3;
  for (std::size_t k = 0; k < 32; ++k) vla.table.entry[k] = {static_cast<uint8_t>(k & 0xF), static_cast<uint8_t>(200 - k)};
  InformInfoRecord iir;
  iir.subscriber_gid = *wire::Gid::parse("fe80::2:c903:0:7");
  iir.subscriber_enum = 0x0042;
  GuidInfoRecord gir;
  gir.lid = 0x0809;
  gir.block = 0x05;
  PortInfoRecord pir;
  pir.endport_lid = 0x090A;
  pir.port_num = 0x0B;
  pir.port_info.lid = 0x0C0D;
  pir.port_info.master_sm_lid = 0x0E0F;
  pir.port_info.local_port_num = 0x11;

  const std::vector<std::array<uint8_t, 256>> mads = {get_resp(link), get_resp(swi), get_resp(lft),
                                                      get_resp(mft),  get_resp(smi), get_resp(pkr),
                                                      get_resp(slv),  get_resp(vla), get_resp(iir),
                                                      get_resp(gir), get_resp(pir)};
  ASSERT_EQ(capture.write(mads), "");
  const std::vector<std::string> fields = {
      "infiniband.mad.attributeid",
      "infiniband.linkrecord.fromlid", "infiniband.linkrecord.fromport",
      "infiniband.linkrecord.toport", "infiniband.linkrecord.tolid",
      "infiniband.sa.lid", "infiniband.sa.portnum", "infiniband.sa.inputportnum",
      "infiniband.sa.outputportnum", "infiniband.sa.blocknum_eightbit",
      "infiniband.sa.blocknum_ninebit", "infiniband.sa.blocknum_sixteenbit", "infiniband.sa.position",
      "infiniband.switchinfo.linearfdbcap", "infiniband.switchinfo.randomfdbcap",
      "infiniband.switchinfo.multicastfdbcap", "infiniband.switchinfo.linearfdbtop",
      "infiniband.switchinfo.defaultport", "infiniband.switchinfo.defaultmulticastprimaryport",
      "infiniband.switchinfo.defaultmulticastnotprimaryport", "infiniband.switchinfo.lifetimevalue",
      "infiniband.switchinfo.lidsperport", "infiniband.switchinfo.partitionenforcementcap",
      "infiniband.linearforwardingtable.port", "infiniband.multicastforwardingtable.portmask",
      "infiniband.sminfo.guid", "infiniband.sminfo.sm_key", "infiniband.sminfo.actcount",
      "infiniband.sminfo.priority", "infiniband.sminfo.smstate",
      "infiniband.p_keytable.membershiptype", "infiniband.p_keytable.p_keybase",
      "infiniband.sltovlmappingtable.sltovlhighbits", "infiniband.sltovlmappingtable.sltovllowbits",
      "infiniband.vlarbitrationtable.vl", "infiniband.vlarbitrationtable.weight",
      "infiniband.informinforecord.subscribergid", "infiniband.informinforecord.enum",
      "infiniband.sa.endportlid", "infiniband.portinfo.lid", "infiniband.portinfo.mastersmlid",
      "infiniband.portinfo.localportnum",
  };
  const auto rows = testing::decode(capture.path(), fields);
  ASSERT_EQ(rows.size(), mads.size());
  const auto expect = [&](std::size_t i, const std::map<std::string, std::string>& want) {
    testing::expect_fields(rows[i], i, want);
  };
  expect(0, {{"infiniband.linkrecord.fromlid", "0x1234"}, {"infiniband.linkrecord.fromport", "7"},
             {"infiniband.linkrecord.toport", "9"}, {"infiniband.linkrecord.tolid", "0x0abc"}});
  expect(1, {{"infiniband.sa.lid", "0x0102"}, {"infiniband.switchinfo.linearfdbcap", "0xc000"},
             {"infiniband.switchinfo.randomfdbcap", "0x11"}, {"infiniband.switchinfo.multicastfdbcap", "0x200"},
             {"infiniband.switchinfo.linearfdbtop", "0x345"}, {"infiniband.switchinfo.defaultport", "3"},
             {"infiniband.switchinfo.defaultmulticastprimaryport", "4"},
             {"infiniband.switchinfo.defaultmulticastnotprimaryport", "5"},
             {"infiniband.switchinfo.lifetimevalue", "0x13"}, {"infiniband.switchinfo.lidsperport", "0x21"},
             {"infiniband.switchinfo.partitionenforcementcap", "0x31"}});
  std::string lft_ports, mft_masks;
  for (std::size_t k = 0; k < 64; ++k) lft_ports += (k ? "," : "") + std::to_string(lft.lft.port[k]);
  // Wireshark 4.0 decodes the first 16 of the block's 32 PortMasks.
  for (std::size_t k = 0; k < 16; ++k) mft_masks += (k ? "," : "") + std::to_string(mft.mft.port_mask[k]);
  expect(2, {{"infiniband.sa.lid", "0x0203"}, {"infiniband.sa.blocknum_sixteenbit", "0x11"},
             {"infiniband.linearforwardingtable.port", lft_ports}});
  expect(3, {{"infiniband.sa.lid", "0x0304"}, {"infiniband.sa.position", "10"},
             {"infiniband.sa.blocknum_ninebit", "0x1a5"}, {"infiniband.multicastforwardingtable.portmask", mft_masks}});
  expect(4, {{"infiniband.sa.lid", "0x0405"}, {"infiniband.sminfo.guid", "0x0002c90300000001"},
             {"infiniband.sminfo.sm_key", "0x1122334455667788"}, {"infiniband.sminfo.actcount", "0x01020304"},
             {"infiniband.sminfo.priority", "11"}, {"infiniband.sminfo.smstate", "3"}});
  std::string types, bases;
  for (std::size_t k = 0; k < 32; ++k) {
    types += (k ? "," : "") + std::to_string(pkr.table.p_key[k] >> 15);
    bases += (k ? "," : "") + std::to_string(pkr.table.p_key[k] & 0x7FFF);
  }
  // BlockNum goes little-endian, as OpenSM sends it (pkey_table_record.h):
  // Wireshark, reading the IBTA's big-endian field, shows block 0x0102 as
  // 0x0201, as it does for OpenSM's own answers.
  expect(5, {{"infiniband.sa.lid", "0x0506"}, {"infiniband.sa.blocknum_sixteenbit", "0x0201"},
             {"infiniband.sa.portnum", "0x21"}, {"infiniband.p_keytable.membershiptype", types},
             {"infiniband.p_keytable.p_keybase", bases}});
  std::string high, low;
  for (std::size_t sl = 0; sl < 16; sl += 2) {
    high += (sl ? "," : "") + std::to_string(slv.table.vl[sl]);
    low += (sl ? "," : "") + std::to_string(slv.table.vl[sl + 1]);
  }
  expect(6, {{"infiniband.sa.lid", "0x0607"}, {"infiniband.sa.inputportnum", "0x12"},
             {"infiniband.sa.outputportnum", "0x13"},
             {"infiniband.sltovlmappingtable.sltovlhighbits", high},
             {"infiniband.sltovlmappingtable.sltovllowbits", low}});
  std::string vls, weights;
  for (std::size_t k = 0; k < 32; ++k) {
    vls += (k ? "," : "") + std::to_string(vla.table.entry[k].vl);
    weights += (k ? "," : "") + std::to_string(vla.table.entry[k].weight);
  }
  expect(7, {{"infiniband.sa.lid", "0x0708"}, {"infiniband.sa.outputportnum", "0x14"},
             {"infiniband.sa.blocknum_eightbit", "3"}, {"infiniband.vlarbitrationtable.vl", vls},
             {"infiniband.vlarbitrationtable.weight", weights}});
  expect(8, {{"infiniband.informinforecord.subscribergid", "fe80::2:c903:0:7"},
             {"infiniband.informinforecord.enum", "0x42"}});
  expect(9, {{"infiniband.sa.lid", "0x0809"}, {"infiniband.sa.blocknum_eightbit", "5"}});
  expect(10, {{"infiniband.sa.endportlid", "0x090a"}, {"infiniband.sa.portnum", "0x0b"},
              {"infiniband.portinfo.lid", "0x0c0d"}, {"infiniband.portinfo.mastersmlid", "0x0e0f"},
              {"infiniband.portinfo.localportnum", "0x11"}});
}

}  // namespace
}  // namespace ibfab::mad

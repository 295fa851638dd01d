#pragma once
// CM messages with every field set to a distinct value, shared by the
// layout test (cm_messages_test.cpp) and the Wireshark test
// (cm_messages_tshark_test.cpp): a field packed at another's offset reads
// as that field's value.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabric/mad/cm_dreq.h"
#include "fabric/mad/cm_lap.h"
#include "fabric/mad/cm_mra.h"
#include "fabric/mad/cm_rej.h"
#include "fabric/mad/cm_rep.h"
#include "fabric/mad/cm_req.h"
#include "fabric/mad/cm_rtu.h"

namespace ibfab::mad::testing {

// `n` bytes counting up from `first` (mod 256).
inline std::vector<uint8_t> counting(std::size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + i);
  return v;
}

template <std::size_t N>
std::array<uint8_t, N> counting_array(uint8_t first) {
  std::array<uint8_t, N> a{};
  const std::vector<uint8_t> v = counting(N, first);
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

// Distinct values for the paths' fields.
inline CmPath primary_path() {
  CmPath p;
  p.local_lid = 0x3536;
  p.remote_lid = 0x3738;
  p.local_gid = counting_array<16>(0x40);
  p.remote_gid = counting_array<16>(0x50);
  p.flow_label = 0xabcde;
  p.packet_rate = 0x2a;
  p.traffic_class = 0x61;
  p.hop_limit = 0x62;
  p.sl = 0xc;
  p.subnet_local = true;
  p.local_ack_timeout = 0x11;
  return p;
}

inline CmPath alternate_path() {
  CmPath p;
  p.local_lid = 0x6364;
  p.remote_lid = 0x6566;
  p.local_gid = counting_array<16>(0x70);
  p.remote_gid = counting_array<16>(0x80);
  p.flow_label = 0x12345;
  p.packet_rate = 0x15;
  p.traffic_class = 0x91;
  p.hop_limit = 0x92;
  p.sl = 0x3;
  p.subnet_local = false;
  p.local_ack_timeout = 0x0e;
  return p;
}

inline CmReq sample_req() {
  CmReq m;
  m.local_comm_id = 0x01020304;
  m.vendor_id = 0x050607;
  m.service_id = 0x1011121314151617ull;
  m.local_ca_guid = 0x18191a1b1c1d1e1full;
  m.local_qkey = 0x20212223;
  m.local_qpn = 0x242526;
  m.responder_resources = 0x27;
  m.local_eecn = 0x28292a;
  m.initiator_depth = 0x2b;
  m.remote_eecn = 0x2c2d2e;
  m.remote_cm_response_timeout = 0x13;
  m.transport_service_type = cm_transport::kRd;
  m.end_to_end_flow_control = true;
  m.starting_psn = 0x303132;
  m.local_cm_response_timeout = 0x16;
  m.retry_count = 5;
  m.partition_key = 0x8034;
  m.path_mtu = 5;
  m.rdc_exists = true;
  m.rnr_retry_count = 6;
  m.max_cm_retries = 0xa;
  m.srq = true;
  m.extended_transport_type = 3;
  m.primary_path = primary_path();
  m.alternate_path = alternate_path();
  m.sap_supported = true;
  m.private_data = counting_array<92>(0xa0);
  return m;
}

inline CmRep sample_rep() {
  CmRep m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.local_qkey = 0x090a0b0c;
  m.local_qpn = 0x0d0e0f;
  m.vendor_id = 0x102030;
  m.local_eecn = 0x111213;
  m.starting_psn = 0x141516;
  m.responder_resources = 0x17;
  m.initiator_depth = 0x18;
  m.target_ack_delay = 0x19;
  m.failover_accepted = cm_failover::kRejected;
  m.end_to_end_flow_control = true;
  m.rnr_retry_count = 5;
  m.srq = true;
  m.local_ca_guid = 0x2122232425262728ull;
  m.private_data = counting_array<196>(0x30);
  return m;
}

inline CmRtu sample_rtu() {
  CmRtu m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.private_data = counting_array<224>(0x11);
  return m;
}

inline CmRej sample_rej() {
  CmRej m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.message_rejected = cm_rej_msg::kOther;
  m.reject_info_length = 0x45;
  m.reason = CmRejReason::kConsumerReject;
  m.ari = counting_array<72>(0x20);
  m.private_data = counting_array<148>(0x70);
  return m;
}

inline CmMra sample_mra() {
  CmMra m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.message_mraed = cm_mra_msg::kRep;
  m.service_timeout = 0x17;
  m.private_data = counting_array<222>(0x33);
  return m;
}

inline CmDreq sample_dreq() {
  CmDreq m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.remote_qpn_eecn = 0x0a0b0c;
  m.private_data = counting_array<220>(0x44);
  return m;
}

inline CmDrep sample_drep() {
  CmDrep m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.private_data = counting_array<224>(0x55);
  return m;
}

inline CmLap sample_lap() {
  CmLap m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.remote_qpn_eecn = 0x0a0b0c;
  m.remote_cm_response_timeout = 0x15;
  m.alternate_path.local_lid = 0x1415;
  m.alternate_path.remote_lid = 0x1617;
  m.alternate_path.local_gid = counting_array<16>(0x20);
  m.alternate_path.remote_gid = counting_array<16>(0x30);
  m.alternate_path.flow_label = 0xfedcb;
  m.alternate_path.traffic_class = 0x5a;
  m.alternate_path.hop_limit = 0x5b;
  m.alternate_path.packet_rate = 0x3c;
  m.alternate_path.sl = 0x9;
  m.alternate_path.subnet_local = true;
  m.alternate_path.local_ack_timeout = 0x1f;
  m.private_data = counting_array<168>(0x66);
  return m;
}

inline CmApr sample_apr() {
  CmApr m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.additional_info_length = 72;
  m.ap_status = CmAprStatus::kIsCurrent;
  m.additional_info = counting_array<72>(0x21);
  m.private_data = counting_array<148>(0x77);
  return m;
}

}  // namespace ibfab::mad::testing

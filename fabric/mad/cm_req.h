#pragma once
// REQ, the request for communication (IBTA 1.3 vol 1, 12.6; AttributeID
// 0x0010): the active side's QP, its path(s) and its private data. Byte
// offsets within the 232-byte message (bits numbered 7..0, 7 most
// significant):
//   0 LocalCommunicationID(32)   4 reserved(8) | VendorID(24)
//   8 ServiceID(64)   16 LocalCAGUID(64)   24 reserved(32)   28 LocalQ_Key(32)
//  32 LocalQPN(24) | ResponderResources(8)
//  36 LocalEECN(24) | InitiatorDepth(8)
//  40 RemoteEECN(24)
//  43 RemoteCMResponseTimeout 7:3 | TransportServiceType 2:1 | EndToEndFlowControl 0
//  44 StartingPSN(24)   47 LocalCMResponseTimeout 7:3 | RetryCount 2:0
//  48 PartitionKey(16)  50 PathPacketPayloadMTU 7:4 | RDCExists 3 | RNRRetryCount 2:0
//  51 MaxCMRetries 7:4 | SRQ 3 | ExtendedTransportType 2:0
//  52 PrimaryPath(44 bytes, cm_path.h's REQ layout)
//  96 AlternatePath(44 bytes); byte 139 bit 2 is SAPSupported
// 140 PrivateData(92 bytes)
// VendorID (IBTA 1.4, what Linux's ECE sends) and SAPSupported are as Linux's
// ibta_vol1_c12.h places them. Reserved bits are written as zero and ignored
// on reading.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_mad.h"
#include "fabric/mad/cm_path.h"

namespace ibfab::mad {

// REQ:TransportServiceType (2 bits); 3 means "see ExtendedTransportType".
namespace cm_transport {
inline constexpr uint8_t kRc = 0;
inline constexpr uint8_t kUc = 1;
inline constexpr uint8_t kRd = 2;
inline constexpr uint8_t kExtended = 3;
}  // namespace cm_transport

// REQ:ExtendedTransportType (3 bits), with TransportServiceType kExtended.
namespace cm_ext_transport {
inline constexpr uint8_t kXrc = 1;
}  // namespace cm_ext_transport

struct CmReq {
  static constexpr uint16_t kAttributeId = cm_attr::kReq;
  static constexpr std::size_t kSize = kCmDataSize;
  static constexpr std::size_t kPrimaryPathOffset = 52;
  static constexpr std::size_t kAlternatePathOffset = 96;
  static constexpr std::size_t kPrivateDataOffset = 140;
  static constexpr std::size_t kPrivateDataSize = 92;

  uint32_t local_comm_id = 0;
  uint32_t vendor_id = 0;                   // 24 bits
  uint64_t service_id = 0;
  uint64_t local_ca_guid = 0;
  uint32_t local_qkey = 0;
  uint32_t local_qpn = 0;                   // 24 bits
  uint8_t responder_resources = 0;
  uint32_t local_eecn = 0;                  // 24 bits
  uint8_t initiator_depth = 0;
  uint32_t remote_eecn = 0;                 // 24 bits
  uint8_t remote_cm_response_timeout = 0;   // 5 bits: 4.096 us * 2^value
  uint8_t transport_service_type = 0;       // 2 bits, cm_transport::
  bool end_to_end_flow_control = false;
  uint32_t starting_psn = 0;                // 24 bits
  uint8_t local_cm_response_timeout = 0;    // 5 bits
  uint8_t retry_count = 0;                  // 3 bits
  uint16_t partition_key = 0;
  uint8_t path_mtu = 0;                     // 4 bits, the IBTA MTU encoding (mtu::)
  bool rdc_exists = false;
  uint8_t rnr_retry_count = 0;              // 3 bits
  uint8_t max_cm_retries = 0;               // 4 bits
  bool srq = false;
  uint8_t extended_transport_type = 0;      // 3 bits, cm_ext_transport::
  CmPath primary_path;
  CmPath alternate_path;                    // all zero: none
  bool sap_supported = false;
  std::array<uint8_t, kPrivateDataSize> private_data{};

  // Whether it asks for an XRC connection (TransportServiceType kExtended,
  // ExtendedTransportType kXrc): from an initiator QP to a target QP.
  bool requests_xrc() const {
    return transport_service_type == cm_transport::kExtended && extended_transport_type == cm_ext_transport::kXrc;
  }

  // Writes all kSize bytes; each field is masked to its width.
  void pack(std::span<uint8_t, kSize> out) const;
  // nullopt when `in` is shorter than kSize.
  static std::optional<CmReq> unpack(std::span<const uint8_t> in);

  friend bool operator==(const CmReq&, const CmReq&) = default;
};

}  // namespace ibfab::mad

#pragma once
// The HCA side of a UD queue pair as the fabric sees it: what it accepts
// (Q_Key, P_Key index) and where accepted messages go. The API layer's
// verbs QPs implement UdEndpoint; tests may implement it directly.
#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace ibfab::fabric {

// One received UD message, as a completion reports it.
struct UdMessage {
  uint8_t port = 0;
  uint32_t dest_qp = 0;  // the receiving QP
  uint32_t src_qp = 0;
  uint16_t slid = 0;
  uint8_t sl = 0;
  uint8_t dlid_path_bits = 0;
  uint16_t pkey_index = 0;
  bool multicast = false;
  bool solicited = false;  // BTH SE: wakes a CQ armed for solicited events
  std::optional<uint32_t> immediate;
  // The 40-byte GRH as received, when the packet carried one.
  std::optional<std::span<const uint8_t, 40>> grh;
  std::span<const uint8_t> payload;
};

class UdEndpoint {
 public:
  virtual ~UdEndpoint() = default;
  // Returns false when the message could not be taken (no receive posted):
  // the HCA then drops and counts it.
  virtual bool on_receive(const UdMessage& msg) = 0;
};

// A message to send from a UD QP.
struct UdSend {
  uint16_t dlid = 0;
  uint32_t dest_qp = 0;       // 0xFFFFFF for multicast
  uint32_t qkey = 0;
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  bool global = false;        // with a GRH
  std::array<uint8_t, 16> dgid{};
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 64;
  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;
  std::optional<uint32_t> immediate;
  bool solicited = false;
  std::span<const uint8_t> payload;
};

}  // namespace ibfab::fabric

#pragma once
// MADs inside packets: where the 256 MAD bytes sit in a UD packet on QP0 or
// QP1, how to build such a packet, and how to turn a received request into
// its response in place (swapping the addressing, resealing the CRCs).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/model/mad_agent.h"
#include "fabric/model/packet.h"

namespace ibfab::fabric {

// Offsets of a MAD-carrying UD packet's headers, from its LRH.
struct MadPacketLayout {
  bool global = false;      // a GRH follows the LRH
  std::size_t bth = 8;
  std::size_t deth = 20;
  std::size_t mad = 28;
};

// Layout of `bytes` if it is a well-formed UD SEND_ONLY packet long enough
// to hold a whole MAD; nullopt otherwise. Checks sizes and opcode only.
std::optional<MadPacketLayout> locate_mad(std::span<const uint8_t> bytes);

// Addressing fields of a received MAD packet, as the receiver reports them.
MadAddress mad_source(std::span<const uint8_t> bytes, const MadPacketLayout& layout);

// What an outgoing MAD packet needs besides the MAD itself.
struct MadSend {
  uint16_t slid = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0;
  bool vl15 = false;         // SMPs travel on VL15
  uint16_t pkey = 0xFFFF;
  uint32_t dest_qp = 0;
  uint32_t src_qp = 0;
  uint32_t qkey = 0;
  const MadAddress* grh = nullptr;  // global route to grh->gid, when has_grh
  std::array<uint8_t, 16> sgid{};   // source GID for a global route
};

// Builds a MAD packet from a 256-byte MAD. Its CRCs are left stale, as a
// patched packet's are: no receiver in the model checks them, and seal()
// computes them before the packet is observed.
PacketRef make_mad_packet(PacketPool& pool, const MadSend& send, std::span<const uint8_t> mad);

// Turns a received request packet (already holding the response MAD bytes)
// into the response packet: swaps LRH DLID/SLID (a permissive DLID answers
// from `own_lid`, 0xFFFF when the port has none), swaps GIDs, points BTH at
// the requester's QP with the QP1 Q_Key rules, and reseals both CRCs.
// Precondition: pkt.unique().
void turn_into_response(PacketRef& pkt, const MadPacketLayout& layout, uint16_t own_lid,
                        uint32_t own_qp);

// Records that the packet's bytes were patched: its ICRC and VCRC are
// recomputed when it is next observed (see PacketRef::seal).
void reseal(PacketRef& pkt);

}  // namespace ibfab::fabric

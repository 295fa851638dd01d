#pragma once
// Subnet Management Packet layout (IBTA Vol 1, 14.2.1) and an in-place view.
//
// LID-routed (class 0x01) and directed-route (class 0x81) SMPs share:
//   0..23    common MAD header; in a DR SMP, Status bit 15 is the D
//            (direction) bit, byte 6 the HopPointer and byte 7 the HopCount
//   24..31   M_Key
//   64..127  SMP data (64 bytes)
// Directed-route only:
//   32..33   DrSLID          34..35   DrDLID
//   128..191 InitialPath     192..255 ReturnPath  (entry 0 unused)
//
// BasicSmpView reads and writes these bytes in place (switches patch hop
// pointers and return paths while forwarding). It does not own the bytes;
// the span must hold at least kMadSize bytes (checked by assert) and outlive
// the view. No allocation, no copies.
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::wire {

namespace smp_attr {
inline constexpr uint16_t kNotice = 0x0002;
inline constexpr uint16_t kNodeDescription = 0x0010;
inline constexpr uint16_t kNodeInfo = 0x0011;
inline constexpr uint16_t kSwitchInfo = 0x0012;
inline constexpr uint16_t kGuidInfo = 0x0014;
inline constexpr uint16_t kPortInfo = 0x0015;
inline constexpr uint16_t kPKeyTable = 0x0016;
inline constexpr uint16_t kSlToVlMappingTable = 0x0017;
inline constexpr uint16_t kVlArbitrationTable = 0x0018;
inline constexpr uint16_t kLinearForwardingTable = 0x0019;
inline constexpr uint16_t kRandomForwardingTable = 0x001a;
inline constexpr uint16_t kMulticastForwardingTable = 0x001b;
inline constexpr uint16_t kSmInfo = 0x0020;
inline constexpr uint16_t kVendorDiag = 0x0030;
inline constexpr uint16_t kLedInfo = 0x0031;
}  // namespace smp_attr

struct SmpLayout {
  static constexpr std::size_t kStatusOffset = 4;
  static constexpr std::size_t kHopPointerOffset = 6;
  static constexpr std::size_t kHopCountOffset = 7;
  static constexpr std::size_t kMKeyOffset = 24;
  static constexpr std::size_t kDrSlidOffset = 32;
  static constexpr std::size_t kDrDlidOffset = 34;
  static constexpr std::size_t kDataOffset = 64;
  static constexpr std::size_t kDataSize = 64;
  static constexpr std::size_t kInitialPathOffset = 128;
  static constexpr std::size_t kReturnPathOffset = 192;
  static constexpr std::size_t kPathSize = 64;
  static constexpr uint16_t kDirectionBit = 0x8000;  // in the status word
  static constexpr uint8_t kMaxHops = 63;
};

// Byte is uint8_t (mutable view) or const uint8_t (read-only view).
template <class Byte>
class BasicSmpView {
  static constexpr bool kMutable = !std::is_const_v<Byte>;

 public:
  explicit BasicSmpView(std::span<Byte> mad) : p_(mad.data()) { assert(mad.size() >= kMadSize); }
  // A read-only view from a mutable one.
  template <class Other>
    requires(std::is_const_v<Byte> && !std::is_const_v<Other>)
  BasicSmpView(BasicSmpView<Other> other) : p_(other.bytes().data()) {}

  std::span<Byte, kMadSize> bytes() const { return std::span<Byte, kMadSize>(p_, kMadSize); }

  uint8_t mgmt_class() const { return p_[1]; }
  bool is_directed() const { return p_[1] == mgmt_class::kSubnDirected; }
  uint8_t method() const { return p_[3]; }
  uint64_t tid() const { return load_be64(p_ + 8); }
  uint16_t attr_id() const { return load_be16(p_ + 16); }
  uint32_t attr_mod() const { return load_be32(p_ + 20); }

  // The status word without the D bit (DR SMPs) / the whole word (LID-routed
  // SMPs, whose bit 15 is part of the class-specific status).
  uint16_t status() const {
    const uint16_t s = load_be16(p_ + SmpLayout::kStatusOffset);
    return is_directed() ? static_cast<uint16_t>(s & ~SmpLayout::kDirectionBit) : s;
  }
  // D bit: false outbound (requester to responder), true on the way back.
  bool direction() const { return (p_[SmpLayout::kStatusOffset] & 0x80) != 0; }
  uint8_t hop_pointer() const { return p_[SmpLayout::kHopPointerOffset]; }
  uint8_t hop_count() const { return p_[SmpLayout::kHopCountOffset]; }
  uint64_t m_key() const { return load_be64(p_ + SmpLayout::kMKeyOffset); }
  uint16_t dr_slid() const { return load_be16(p_ + SmpLayout::kDrSlidOffset); }
  uint16_t dr_dlid() const { return load_be16(p_ + SmpLayout::kDrDlidOffset); }
  // i in [0, 64); entry 0 is unused by the IBTA.
  uint8_t initial_path(std::size_t i) const {
    assert(i < SmpLayout::kPathSize);
    return p_[SmpLayout::kInitialPathOffset + i];
  }
  uint8_t return_path(std::size_t i) const {
    assert(i < SmpLayout::kPathSize);
    return p_[SmpLayout::kReturnPathOffset + i];
  }
  std::span<Byte, SmpLayout::kDataSize> data() const {
    return std::span<Byte, SmpLayout::kDataSize>(p_ + SmpLayout::kDataOffset, SmpLayout::kDataSize);
  }

  void set_status(uint16_t s) const requires kMutable {
    const uint16_t keep = is_directed() ? (load_be16(p_ + SmpLayout::kStatusOffset) & SmpLayout::kDirectionBit) : 0;
    store_be16(p_ + SmpLayout::kStatusOffset,
               static_cast<uint16_t>(keep | (is_directed() ? (s & ~SmpLayout::kDirectionBit) : s)));
  }
  void set_direction(bool back) const requires kMutable {
    p_[SmpLayout::kStatusOffset] =
        static_cast<uint8_t>((p_[SmpLayout::kStatusOffset] & 0x7f) | (back ? 0x80 : 0));
  }
  void set_method(uint8_t m) const requires kMutable { p_[3] = m; }
  void set_hop_pointer(uint8_t hp) const requires kMutable { p_[SmpLayout::kHopPointerOffset] = hp; }
  void set_hop_count(uint8_t hc) const requires kMutable { p_[SmpLayout::kHopCountOffset] = hc; }
  void set_m_key(uint64_t k) const requires kMutable { store_be64(p_ + SmpLayout::kMKeyOffset, k); }
  void set_dr_slid(uint16_t lid) const requires kMutable { store_be16(p_ + SmpLayout::kDrSlidOffset, lid); }
  void set_dr_dlid(uint16_t lid) const requires kMutable { store_be16(p_ + SmpLayout::kDrDlidOffset, lid); }
  void set_initial_path(std::size_t i, uint8_t port) const requires kMutable {
    assert(i < SmpLayout::kPathSize);
    p_[SmpLayout::kInitialPathOffset + i] = port;
  }
  void set_return_path(std::size_t i, uint8_t port) const requires kMutable {
    assert(i < SmpLayout::kPathSize);
    p_[SmpLayout::kReturnPathOffset + i] = port;
  }

 private:
  Byte* p_;
};

using SmpView = BasicSmpView<uint8_t>;
using ConstSmpView = BasicSmpView<const uint8_t>;

}  // namespace ibfab::wire

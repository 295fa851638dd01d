#pragma once
// Packets as the wire carries them: the bytes from the first byte of the LRH
// to the last byte of the VCRC, in a pooled, reference-counted buffer.
//
// Ownership: a PacketRef holds one reference; copying it adds one (that is
// how multicast replication shares a single payload), destroying it drops
// one, and the last drop returns the buffer to its pool. Not thread-safe:
// a packet belongs to one simulator. A buffer must be exclusively owned
// (unique()) before its bytes are patched, e.g. a DR SMP's hop pointer.
//
// CRCs: no receiver in the model checks ICRC/VCRC, so a patched packet (or
// a MAD packet just made, make_mad_packet) only marks them stale
// (crcs_stale()) and they are computed when the packet is observed: seal()
// before a capture writes it. What leaves the model is always byte-exact.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace ibfab::fabric {

class PacketPool;

struct PacketBuffer {
  PacketPool* pool;
  PacketBuffer* next_free;
  uint64_t id;        // unique per pool, in allocation order: deterministic
  uint32_t refs;
  uint32_t length;    // bytes in use
  uint32_t capacity;  // bytes available after the header
  uint16_t size_class;
  bool crcs_stale;    // bytes were patched since the ICRC/VCRC were computed
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(this + 1); }
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(this + 1); }
};

class PacketRef {
 public:
  PacketRef() = default;
  explicit PacketRef(PacketBuffer* b) : b_(b) {}  // adopts one reference
  PacketRef(const PacketRef& o) : b_(o.b_) { if (b_) ++b_->refs; }
  PacketRef(PacketRef&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
  PacketRef& operator=(PacketRef o) noexcept { std::swap(b_, o.b_); return *this; }
  ~PacketRef() { reset(); }
  void reset();

  explicit operator bool() const { return b_ != nullptr; }
  bool unique() const { return b_ && b_->refs == 1; }
  uint64_t id() const { return b_->id; }
  uint32_t size() const { return b_->length; }
  std::span<const uint8_t> bytes() const { return {b_->bytes(), b_->length}; }
  // Mutable access; precondition: unique().
  std::span<uint8_t> mutable_bytes() { return {b_->bytes(), b_->length}; }
  void resize(uint32_t length);  // precondition: length <= capacity

  // The bytes changed: ICRC and VCRC no longer match them.
  void crcs_stale() { b_->crcs_stale = true; }
  bool crcs_valid() const { return !b_->crcs_stale; }
  // Recomputes ICRC and VCRC if stale (the CRC bytes are a function of the
  // rest, so this is safe on a shared buffer too).
  void seal() const;

 private:
  PacketBuffer* b_ = nullptr;
};

// Fixed size classes with free lists: after warm-up, making and dropping
// packets allocates nothing.
class PacketPool {
 public:
  // Large enough for a 4096-byte MTU packet with every header and CRC.
  static constexpr uint32_t kMaxPacket = 4096 + 128;

  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;
  ~PacketPool();

  // A buffer of `length` bytes (contents unspecified); length <= kMaxPacket.
  PacketRef make(uint32_t length);
  // A copy of `src` that the caller owns alone.
  PacketRef clone(const PacketRef& src);

  std::size_t buffers_allocated() const { return allocated_; }
  std::size_t buffers_in_use() const { return in_use_; }

 private:
  friend class PacketRef;
  void release(PacketBuffer* b);

  static constexpr uint32_t kClasses[] = {512, kMaxPacket};
  PacketBuffer* free_[2] = {nullptr, nullptr};
  std::vector<void*> blocks_;
  uint64_t next_id_ = 1;
  std::size_t allocated_ = 0, in_use_ = 0;
};

inline void PacketRef::reset() {
  if (b_ && --b_->refs == 0) b_->pool->release(b_);
  b_ = nullptr;
}

}  // namespace ibfab::fabric

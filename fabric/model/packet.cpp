#include "fabric/model/packet.h"

#include "fabric/wire/crc.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace ibfab::fabric {

PacketPool::~PacketPool() {
  for (void* b : blocks_) std::free(b);
}

void PacketRef::resize(uint32_t length) {
  if (length > b_->capacity) throw std::length_error("packet larger than its buffer");
  b_->length = length;
}

void PacketRef::seal() const {
  if (!b_->crcs_stale) return;
  wire::seal_crcs(std::span<uint8_t>(b_->bytes(), b_->length));
  b_->crcs_stale = false;
}

PacketRef PacketPool::make(uint32_t length) {
  if (length > kMaxPacket) throw std::length_error("packet larger than the largest MTU");
  const uint32_t cls = length <= kClasses[0] ? 0 : 1;
  PacketBuffer* b = free_[cls];
  if (b) {
    free_[cls] = b->next_free;
  } else {
    void* mem = std::malloc(sizeof(PacketBuffer) + kClasses[cls]);
    if (!mem) throw std::bad_alloc();
    blocks_.push_back(mem);
    b = ::new (mem) PacketBuffer{this, nullptr, 0, 0, 0, kClasses[cls], static_cast<uint16_t>(cls), false};
    ++allocated_;
  }
  b->id = next_id_++;
  b->refs = 1;
  b->length = length;
  b->next_free = nullptr;
  b->crcs_stale = false;
  ++in_use_;
  return PacketRef(b);
}

PacketRef PacketPool::clone(const PacketRef& src) {
  PacketRef copy = make(src.size());
  std::memcpy(copy.mutable_bytes().data(), src.bytes().data(), src.size());
  if (!src.crcs_valid()) copy.crcs_stale();
  return copy;
}

void PacketPool::release(PacketBuffer* b) {
  b->next_free = free_[b->size_class];
  free_[b->size_class] = b;
  --in_use_;
}

}  // namespace ibfab::fabric

#pragma once
// Reading a message's bytes a chunk at a time, for host memory whose every
// read costs far more than its copy (a served client's, reached by system
// calls: HostMemory::read_ahead() says how much is worth reading at once).
//
// The chunk belongs to one message, named by its `key`, which the producer
// takes from next_key() when it starts the message; a read for another
// message, or past the chunk, loads a new one. Only bytes of a message the
// HCA is sending are held, and a program may not change those until the
// message completes, so a packet sent from the chunk carries what a DMA at
// the packet's own time would read. When a chunk cannot be loaded whole
// (a fault somewhere in it), the read falls back to the bytes asked for
// alone, so that the fault is reported with the packet that meets it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ibfab::fabric {

class ReadAhead {
 public:
  // A key no other message of this reader has had or will have.
  uint64_t next_key() { return ++keys_; }

  // Bytes [offset, offset + out.size()) of message `key`, which is
  // `length` bytes long, into `out`. load(from, span) reads the message's
  // bytes [from, from + span.size()) and says whether it could; `chunk` is
  // the most to read at once. False when the bytes asked for cannot be read.
  template <typename Load>
  bool read(uint64_t key, uint64_t offset, uint64_t length, uint32_t chunk, std::span<uint8_t> out, Load&& load) {
    if (!(key == key_ && offset >= from_ && offset + out.size() <= from_ + held_)) {
      const uint64_t take = std::min<uint64_t>(std::max<uint64_t>(chunk, out.size()), length - offset);
      if (bytes_.size() < take) bytes_.resize(take);
      key_ = 0;
      if (!load(offset, std::span<uint8_t>(bytes_.data(), take))) return load(offset, out);
      key_ = key;
      from_ = offset;
      held_ = take;
    }
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + (offset - from_), out.size());
    return true;
  }

 private:
  uint64_t keys_ = 0;
  uint64_t key_ = 0;
  uint64_t from_ = 0;
  uint64_t held_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace ibfab::fabric

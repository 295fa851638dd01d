#pragma once
// The memory of the host an HCA sits in, as the HCA's DMA reaches it. The
// engine's implementation reads and writes a client process's address space;
// tests and scenario hosts use a BufferMemory.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ibfab::fabric {

class HostMemory {
 public:
  virtual ~HostMemory() = default;
  // Copies [addr, addr + out.size()) into `out`; false (and `out` unspecified)
  // when any byte of it cannot be read, as a DMA to an unmapped page fails.
  virtual bool read(uint64_t addr, std::span<uint8_t> out) = 0;
  // Copies `in` to [addr, addr + in.size()); false when any byte cannot be
  // written (bytes before the fault may have been).
  virtual bool write(uint64_t addr, std::span<const uint8_t> in) = 0;
  // How many bytes of a message are worth reading at once (ReadAhead), or
  // 0 when a read costs no more than its copy.
  virtual uint32_t read_ahead() const { return 0; }
  // A write of one packet of a message, which the caller follows with
  // flush() when the message ends or is abandoned: the memory may hold it
  // until then to combine it with the next (as a PCIe write is posted).
  // A read or an ordinary write through this memory flushes first.
  virtual bool write_posted(uint64_t addr, std::span<const uint8_t> in) { return write(addr, in); }
  // Makes every posted write visible; false when any could not be written.
  virtual bool flush() { return true; }
};

// Host memory that is one buffer mapped at `base`; every other address faults.
class BufferMemory final : public HostMemory {
 public:
  BufferMemory(uint64_t base, std::size_t size) : base_(base), bytes_(size) {}
  bool read(uint64_t addr, std::span<uint8_t> out) override {
    if (!inside(addr, out.size())) return false;
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + (addr - base_), out.size());
    return true;
  }
  bool write(uint64_t addr, std::span<const uint8_t> in) override {
    if (!inside(addr, in.size())) return false;
    if (!in.empty()) std::memcpy(bytes_.data() + (addr - base_), in.data(), in.size());
    return true;
  }
  uint64_t base() const { return base_; }
  std::span<uint8_t> bytes() { return bytes_; }

 private:
  bool inside(uint64_t addr, std::size_t n) const {
    return addr >= base_ && addr - base_ <= bytes_.size() && n <= bytes_.size() - (addr - base_);
  }
  uint64_t base_;
  std::vector<uint8_t> bytes_;
};

}  // namespace ibfab::fabric

#pragma once
// Classic libpcap files of IBA packets, as Wireshark and tshark read them.
//
// File: the nanosecond variant (magic 0xa1b23c4d, written in host byte
// order; readers detect it), version 2.4, snaplen 65535. Two link types:
//   kErf (default): LINKTYPE_ERF (197); each record is a 16-byte ERF header
//     of type 21 (INFINIBAND) followed by the packet. This is what ibdump
//     writes and what Wireshark 4.0 (Debian 12) decodes.
//   kInfiniband: LINKTYPE_INFINIBAND (247); each record is the bare packet.
//     The registered link type, but Wireshark 4.0 refuses to open it
//     ("network type 247 unknown or unsupported").
// Either way the packet bytes are exactly the wire bytes from the first byte
// of the LRH through the VCRC. Writes are buffered by stdio; close() (or the
// destructor) flushes. Not thread-safe.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "sim/time.h"

namespace ibfab::wire {

class PcapWriter {
 public:
  enum class Link : uint8_t { kErf, kInfiniband };

  static constexpr uint32_t kMagicNanoseconds = 0xa1b23c4d;
  static constexpr uint32_t kSnapLen = 65535;
  static constexpr uint32_t kLinkTypeErf = 197;
  static constexpr uint32_t kLinkTypeInfiniband = 247;
  static constexpr uint8_t kErfTypeInfiniband = 21;
  static constexpr std::size_t kErfHeaderSize = 16;

  PcapWriter() = default;
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Creates (truncates) `path` and writes the file header. Returns "" on
  // success, otherwise a message naming the path and the reason.
  std::string open(const std::string& path, Link link = Link::kErf);
  bool is_open() const { return f_ != nullptr; }

  // Appends one record stamped `t` (negative times are written as 0).
  // Packets longer than the snaplen are truncated to it, with their original
  // length recorded. Returns false if not open or the write failed.
  bool write(sim::Time t, std::span<const uint8_t> packet);

  // Flushes and closes; returns "" or an error message. Safe to call twice.
  std::string close();

  uint64_t records() const { return records_; }

 private:
  std::FILE* f_ = nullptr;
  Link link_ = Link::kErf;
  std::string path_;
  uint64_t records_ = 0;
};

}  // namespace ibfab::wire

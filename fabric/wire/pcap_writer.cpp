#include "fabric/wire/pcap_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {
namespace {

struct FileHeader {
  uint32_t magic;
  uint16_t version_major;
  uint16_t version_minor;
  int32_t thiszone;
  uint32_t sigfigs;
  uint32_t snaplen;
  uint32_t network;
};
static_assert(sizeof(FileHeader) == 24);

struct RecordHeader {
  uint32_t ts_sec;
  uint32_t ts_nsec;
  uint32_t incl_len;
  uint32_t orig_len;
};
static_assert(sizeof(RecordHeader) == 16);

constexpr uint8_t kErfFlagVarLen = 0x04;
constexpr uint8_t kErfFlagTruncated = 0x08;

// ERF record header: timestamp (little-endian 32.32 fixed-point seconds),
// type, flags, rlen, lctr, wlen (big-endian).
void erf_header(uint8_t* h, uint64_t sec, uint64_t nsec, std::size_t incl, std::size_t wire_len) {
  const uint64_t ts = sec << 32 | (nsec << 32) / 1'000'000'000;
  for (int i = 0; i < 8; ++i) h[i] = static_cast<uint8_t>(ts >> (8 * i));
  h[8] = PcapWriter::kErfTypeInfiniband;
  h[9] = static_cast<uint8_t>(kErfFlagVarLen | (incl < wire_len ? kErfFlagTruncated : 0));
  store_be16(h + 10, static_cast<uint16_t>(PcapWriter::kErfHeaderSize + incl));
  store_be16(h + 12, 0);
  store_be16(h + 14, static_cast<uint16_t>(std::min<std::size_t>(wire_len, 0xffff)));
}

}  // namespace

PcapWriter::~PcapWriter() { close(); }

std::string PcapWriter::open(const std::string& path, Link link) {
  close();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "cannot create " + path + ": " + std::strerror(errno);
  const FileHeader h{kMagicNanoseconds, 2, 4, 0, 0, kSnapLen,
                     link == Link::kErf ? kLinkTypeErf : kLinkTypeInfiniband};
  if (std::fwrite(&h, sizeof h, 1, f) != 1) {
    const std::string err = "cannot write " + path + ": " + std::strerror(errno);
    std::fclose(f);
    return err;
  }
  f_ = f;
  link_ = link;
  path_ = path;
  records_ = 0;
  return "";
}

bool PcapWriter::write(sim::Time t, std::span<const uint8_t> packet) {
  if (f_ == nullptr) return false;
  const uint64_t ns = static_cast<uint64_t>(std::max<int64_t>(t.ps(), 0) / 1000);
  const uint64_t sec = ns / 1'000'000'000;
  const uint64_t nsec = ns % 1'000'000'000;
  const bool erf = link_ == Link::kErf;
  const std::size_t extra = erf ? kErfHeaderSize : 0;
  const std::size_t incl = std::min<std::size_t>(packet.size(), kSnapLen - extra);
  const RecordHeader rh{static_cast<uint32_t>(sec), static_cast<uint32_t>(nsec),
                        static_cast<uint32_t>(extra + incl), static_cast<uint32_t>(extra + packet.size())};
  if (std::fwrite(&rh, sizeof rh, 1, f_) != 1) return false;
  if (erf) {
    uint8_t eh[kErfHeaderSize];
    erf_header(eh, sec, nsec, incl, packet.size());
    if (std::fwrite(eh, 1, sizeof eh, f_) != sizeof eh) return false;
  }
  if (incl != 0 && std::fwrite(packet.data(), 1, incl, f_) != incl) return false;
  ++records_;
  return true;
}

std::string PcapWriter::close() {
  if (f_ == nullptr) return "";
  std::string err;
  if (std::fflush(f_) != 0) err = "cannot write " + path_ + ": " + std::strerror(errno);
  if (std::fclose(f_) != 0 && err.empty()) err = "cannot close " + path_ + ": " + std::strerror(errno);
  f_ = nullptr;
  return err;
}

}  // namespace ibfab::wire

#include "sim/trace.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdarg>
#include <cstring>

#include "sim/rng.h"

namespace ibfab::sim {

void RunDigest::fold_bytes(std::span<const uint8_t> bytes) {
  fold(bytes.size());
  // Four lanes of little-endian words, for instruction-level parallelism
  // (a packet's bytes are folded at every hop: this is the run digest's
  // main cost); each lane is a chain of steps each a bijection of the
  // lane, so one changed byte changes its lane, and the lanes are folded
  // in one after the other.
  auto word = [](const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
    return w;
  };
  const uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                      0x082efa98ec4e6c89ull};
  // Two words per multiplication: xor one in, rotate, add the other, then
  // multiply by an odd constant; for given words a bijection of the lane,
  // and for a given lane injective in each word.
  auto mix2 = [](uint64_t h, uint64_t v, uint64_t w) {
    h ^= v;
    return (std::rotl(h, 29) + w) * 0x9e3779b97f4a7c15ull;
  };
  for (; n >= 64; p += 64, n -= 64) {
    for (int k = 0; k < 4; ++k) lane[k] = mix2(lane[k], word(p + 16 * k), word(p + 16 * k + 8));
  }
  int k = 0;
  for (; n >= 8; p += 8, n -= 8, ++k) lane[k & 3] = mix(lane[k & 3], word(p));  // at most 7 words
  uint64_t tail = 0;
  for (std::size_t i = 0; i < n; ++i) tail |= static_cast<uint64_t>(p[i]) << (8 * i);
  lane[3] = mix(lane[3], tail);
  for (const uint64_t l : lane) fold(l);
}

uint64_t RunDigest::value() const {
  uint64_t s = lanes_[0] ^ std::rotl(lanes_[1], 16) ^ std::rotl(lanes_[2], 32) ^ std::rotl(lanes_[3], 48) ^ events_;
  return splitmix64(s);
}

std::string RunDigest::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value()));
  return buf;
}

void FileTraceSink::line(std::string_view text) {
  if ((std::fwrite(text.data(), 1, text.size(), out_) != text.size() || std::fputc('\n', out_) == EOF) && !error_)
    error_ = errno ? errno : EIO;
}

int FileTraceSink::flush() {
  if (std::fflush(out_) != 0 && !error_) error_ = errno ? errno : EIO;
  return error_;
}

void DigestTraceSink::line(std::string_view text) {
  for (unsigned char c : text) h_ = (h_ ^ c) * 0x100000001b3ull;
  h_ = (h_ ^ static_cast<unsigned char>('\n')) * 0x100000001b3ull;
  ++lines_;
}

std::string DigestTraceSink::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

void StringTraceSink::line(std::string_view text) {
  text_.append(text);
  text_.push_back('\n');
}

void Trace::emit(Time at, std::string_view source, const char* fmt, ...) {
  if (!sink_) return;
  int n = std::snprintf(buf_, sizeof buf_, "%lld %.*s ", static_cast<long long>(at.ps()),
                        static_cast<int>(source.size()), source.data());
  if (n < 0) return;
  std::size_t used = static_cast<std::size_t>(n) < sizeof buf_ ? static_cast<std::size_t>(n)
                                                                : sizeof buf_ - 1;
  va_list ap;
  va_start(ap, fmt);
  const int m = std::vsnprintf(buf_ + used, sizeof buf_ - used, fmt, ap);
  va_end(ap);
  if (m > 0) used += std::min(static_cast<std::size_t>(m), sizeof buf_ - used - 1);
  sink_->line(std::string_view(buf_, used));
}

}  // namespace ibfab::sim

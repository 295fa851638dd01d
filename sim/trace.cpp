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
  // Two lanes of little-endian words, for instruction-level parallelism;
  // each lane is a chain of mix() steps, so one changed byte changes its
  // lane, and the lanes are folded in one after the other.
  auto word = [](const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
    return w;
  };
  const uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  uint64_t a = 0x243f6a8885a308d3ull, b = 0x13198a2e03707344ull;
  for (; n >= 16; p += 16, n -= 16) {
    a = mix(a, word(p));
    b = mix(b, word(p + 8));
  }
  if (n >= 8) {
    a = mix(a, word(p));
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  for (std::size_t i = 0; i < n; ++i) tail |= static_cast<uint64_t>(p[i]) << (8 * i);
  b = mix(b, tail);
  fold(a);
  fold(b);
}

uint64_t RunDigest::value() const {
  uint64_t s = h_ ^ events_;
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

#pragma once
// The trace, in two independent forms a run may ask for:
//
// - A RunDigest: every traced happening folded in binary (its time, its
//   source, its kind, its fields and the bytes it carried) into one 64-bit
//   value, the run's fingerprint. Nothing is formatted for it.
// - Text: one line per traced happening, "<time-ps> <source> <text>",
//   formatted into a reused buffer and handed to a TraceSink; with no sink
//   attached, enabled() is false and callers skip formatting entirely.
//   Lines contain only integers and names, so the same run gives the same
//   bytes.
//
// A caller traces an event as
//   if (RunDigest* d = trace.digest()) { d->event(at, source, kind); d->fold(..); }
//   if (trace.enabled()) trace.emit(at, name, "...", ..);
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace ibfab::sim {

// A 64-bit digest of values folded in order. The values go to four lanes in
// turn (the k-th value to lane k mod 4: four independent chains, so that
// folding a packet's fields and bytes at every hop is not one long chain of
// multiplications), and value() combines the lanes. Every fold is, for a
// given input, a bijection of its lane, and for a given lane injective in
// its input; the combination is a bijection of each lane given the others:
// two runs that fold the same sequence but for one value (or one byte of a
// folded span) always end with different digests. Not cryptographic;
// folding allocates nothing.
class RunDigest {
 public:
  // Starts an event: when, which source (a node index, a link id...), and
  // what kind (a tag made with kind_tag; each layer picks its own).
  void event(Time at, uint64_t source, uint32_t kind) {
    ++events_;
    fold(static_cast<uint64_t>(at.ps()));
    fold(source);
    fold(kind);
  }
  void fold(uint64_t v) {
    uint64_t& lane = lanes_[next_++ & 3];
    lane = mix(lane, v);
  }
  // The span's length and every byte.
  void fold_bytes(std::span<const uint8_t> bytes);

  uint64_t value() const;  // the digest of everything folded so far
  std::string hex() const;  // value() as 16 lower-case hex digits
  uint64_t events() const { return events_; }

  // One step: rotate, xor the input, multiply by an odd constant (all three
  // invertible).
  static uint64_t mix(uint64_t h, uint64_t v) { return (std::rotl(h, 27) ^ v) * 0x9e3779b97f4a7c15ull; }

 private:
  uint64_t lanes_[4] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull,
                        0xa54ff53a5f1d36f1ull};
  uint64_t next_ = 0;  // the lane of the next value: next_ mod 4
  uint64_t events_ = 0;
};

// A kind tag from up to four characters ("rx", "link"): readable, distinct.
template <std::size_t N>
constexpr uint32_t kind_tag(const char (&s)[N]) {
  static_assert(N >= 2 && N <= 5, "a kind tag has one to four characters");
  uint32_t v = 0;
  for (std::size_t i = 0; i + 1 < N; ++i) v = v << 8 | static_cast<uint8_t>(s[i]);
  return v;
}

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void line(std::string_view text) = 0;  // text ends without '\n'
};

// Writes each line followed by '\n' to a stdio stream (not owned). A write
// that fails is remembered, not thrown: the owner asks flush() at the end.
class FileTraceSink final : public TraceSink {
 public:
  explicit FileTraceSink(std::FILE* out) : out_(out) {}
  void line(std::string_view text) override;
  // Flushes the stream; 0, or the errno of the first write that failed
  // (the trace is then incomplete).
  int flush();

 private:
  std::FILE* out_;
  int error_ = 0;
};

// Keeps a 64-bit FNV-1a digest of every byte written (lines and their '\n'):
// the run's fingerprint. Cheap enough to leave on for every scenario.
class DigestTraceSink final : public TraceSink {
 public:
  void line(std::string_view text) override;
  uint64_t digest() const { return h_; }
  uint64_t lines() const { return lines_; }
  std::string hex() const;

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
  uint64_t lines_ = 0;
};

// Appends every line to a string (tests).
class StringTraceSink final : public TraceSink {
 public:
  void line(std::string_view text) override;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

class Trace {
 public:
  // Text: lines go to `sink` (nullptr: none, nothing is formatted).
  void attach(TraceSink* sink) { sink_ = sink; }
  bool enabled() const { return sink_ != nullptr; }
  // Binary: events are folded into `digest` (nullptr: none; not owned).
  void attach_digest(RunDigest* digest) { digest_ = digest; }
  RunDigest* digest() const { return digest_; }

  // printf-style; lines longer than the buffer are cut (never overflowed).
  void emit(Time at, std::string_view source, const char* fmt, ...)
      __attribute__((format(printf, 4, 5)));

 private:
  TraceSink* sink_ = nullptr;
  RunDigest* digest_ = nullptr;
  char buf_[512];
};

}  // namespace ibfab::sim

#pragma once
// The trace: one text line per traced happening, "<time-ps> <source> <text>".
//
// A Trace formats into a reused buffer and hands each line to its sink; with
// no sink attached, enabled() is false and callers skip formatting entirely.
// Lines contain only integers and names, so the same run gives the same bytes.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace ibfab::sim {

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

// Sends every line to two sinks.
class TeeTraceSink final : public TraceSink {
 public:
  TeeTraceSink(TraceSink* a, TraceSink* b) : a_(a), b_(b) {}
  void line(std::string_view text) override;

 private:
  TraceSink* a_;
  TraceSink* b_;
};

class Trace {
 public:
  void attach(TraceSink* sink) { sink_ = sink; }
  bool enabled() const { return sink_ != nullptr; }

  // printf-style; lines longer than the buffer are cut (never overflowed).
  void emit(Time at, std::string_view source, const char* fmt, ...)
      __attribute__((format(printf, 4, 5)));

 private:
  TraceSink* sink_ = nullptr;
  char buf_[512];
};

}  // namespace ibfab::sim

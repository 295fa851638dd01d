#include "sim/trace.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>

namespace ibfab::sim {

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

void TeeTraceSink::line(std::string_view text) {
  a_->line(text);
  b_->line(text);
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

#pragma once
// A read position in one line of text, for the net-file reader. Every
// reader returns nullopt (and leaves the position unspecified) on text that
// does not match; none allocates except quoted().
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ibfab::topo {

class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : s_(text) {}

  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  std::string_view rest() const { return s_.substr(i_); }
  void skip_blanks() {
    while (!done() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  // A run of ASCII letters (possibly empty).
  std::string_view word() {
    const size_t start = i_;
    while (!done() && ((s_[i_] >= 'a' && s_[i_] <= 'z') || (s_[i_] >= 'A' && s_[i_] <= 'Z'))) ++i_;
    return s_.substr(start, i_ - start);
  }
  // A run of decimal digits, consumed whole; nullopt when there is none or
  // its value exceeds `max`.
  std::optional<uint64_t> decimal(uint64_t max) {
    if (!is_digit(peek())) return std::nullopt;
    uint64_t v = 0;
    bool overflow = false;
    while (is_digit(peek())) {
      const auto d = static_cast<uint64_t>(s_[i_++] - '0');
      if (overflow || v > (max - d) / 10) overflow = true;
      else v = v * 10 + d;
    }
    if (overflow) return std::nullopt;
    return v;
  }
  // 1..16 hex digits, with an optional 0x prefix when `prefix_optional`,
  // a required one otherwise.
  std::optional<uint64_t> hex(bool prefix_optional) {
    const bool prefixed = rest().size() >= 2 && s_[i_] == '0' && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X');
    if (prefixed) i_ += 2;
    else if (!prefix_optional) return std::nullopt;
    uint64_t v = 0;
    size_t digits = 0;
    for (int d; (d = hex_digit(peek())) >= 0; ++i_, ++digits) {
      if (digits == 16) return std::nullopt;
      v = (v << 4) | static_cast<uint64_t>(d);
    }
    if (digits == 0) return std::nullopt;
    return v;
  }
  // 0x-hex or decimal.
  std::optional<uint64_t> number() {
    if (rest().size() >= 2 && s_[i_] == '0' && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) return hex(false);
    return decimal(UINT64_MAX);
  }
  // "text": the text between the quotes, without them. nullopt when the
  // cursor is not on a quote; `unterminated` is set when no closing quote.
  std::optional<std::string_view> quoted(bool& unterminated) {
    unterminated = false;
    if (peek() != '"') return std::nullopt;
    const size_t close = s_.find('"', i_ + 1);
    if (close == std::string_view::npos) {
      unterminated = true;
      return std::nullopt;
    }
    const std::string_view v = s_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    return v;
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace ibfab::topo

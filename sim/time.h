#pragma once
// Simulated time: a strong signed 64-bit count of picoseconds.
//
// 2^63 ps is about 106 days of simulated time. There is no implicit
// conversion from integers or doubles; build values with the unit helpers
// (Time::ns(3)) and read them back with .ps() or the to_*() helpers.
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace ibfab::sim {

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time ps(int64_t v) { return Time(v); }
  static constexpr Time ns(int64_t v) { return Time(v * 1'000); }
  static constexpr Time us(int64_t v) { return Time(v * 1'000'000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1'000'000'000); }
  static constexpr Time s(int64_t v) { return Time(v * 1'000'000'000'000); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return v_; }
  constexpr double to_ns() const { return static_cast<double>(v_) / 1e3; }
  constexpr double to_us() const { return static_cast<double>(v_) / 1e6; }
  constexpr double to_ms() const { return static_cast<double>(v_) / 1e9; }
  constexpr double to_s() const { return static_cast<double>(v_) / 1e12; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(v_ + o.v_); }
  constexpr Time operator-(Time o) const { return Time(v_ - o.v_); }
  constexpr Time& operator+=(Time o) { v_ += o.v_; return *this; }
  constexpr Time& operator-=(Time o) { v_ -= o.v_; return *this; }
  constexpr Time operator*(int64_t k) const { return Time(v_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(v_ / k); }

  // "12.345us": the largest unit that keeps the integer part non-zero, with
  // exactly three decimals; exact (integer arithmetic), so traces are stable.
  std::string str() const;
  // The shortest text parse_time reads back as this same time: the largest
  // unit that writes it as an integer ("2s", "3500ms", "42ps"; "0").
  std::string exact_str() const;

 private:
  constexpr explicit Time(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

constexpr Time operator*(int64_t k, Time t) { return t * k; }

// Parses "10us", "1.5ms", "250ns", "3s", "42ps" (and a bare "0"). Returns
// false on anything else; never throws.
bool parse_time(const std::string& text, Time& out);

}  // namespace ibfab::sim

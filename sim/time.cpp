#include "sim/time.h"

#include <cstdio>
#include <cstdlib>

namespace ibfab::sim {

namespace {

// The units a time is written in, largest first (ps below them all).
struct Unit { int64_t scale; const char* name; };
constexpr Unit kUnits[] = {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};

}  // namespace

std::string Time::exact_str() const {
  if (v_ == 0) return "0";
  for (const Unit& u : kUnits)
    if (v_ % u.scale == 0) return std::to_string(v_ / u.scale) + u.name;
  return std::to_string(v_) + "ps";
}

std::string Time::str() const {
  const int64_t mag = v_ < 0 ? -v_ : v_;
  for (const Unit& u : kUnits) {
    if (mag >= u.scale) {
      const int64_t milli = mag / (u.scale / 1000);  // value in 1/1000 of the unit
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%lld.%03lld%s", v_ < 0 ? "-" : "",
                    static_cast<long long>(milli / 1000), static_cast<long long>(milli % 1000),
                    u.name);
      return buf;
    }
  }
  return std::to_string(v_) + "ps";
}

bool parse_time(const std::string& text, Time& out) {
  if (text == "0") { out = Time::zero(); return true; }
  size_t i = 0;
  int64_t whole = 0;
  int64_t frac = 0, frac_scale = 1;
  bool digits = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole > 9'000'000'000'000) return false;
    whole = whole * 10 + (text[i++] - '0');
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (frac_scale >= 1'000'000'000'000) return false;
      frac = frac * 10 + (text[i++] - '0');
      frac_scale *= 10;
      digits = true;
    }
  }
  if (!digits) return false;
  const std::string unit = text.substr(i);
  int64_t scale;
  if (unit == "ps") scale = 1;
  else if (unit == "ns") scale = 1'000;
  else if (unit == "us") scale = 1'000'000;
  else if (unit == "ms") scale = 1'000'000'000;
  else if (unit == "s") scale = 1'000'000'000'000;
  else return false;
  if (whole > std::numeric_limits<int64_t>::max() / scale) return false;
  const int64_t fpart = frac * scale / frac_scale;
  if (frac * scale % frac_scale != 0) return false;  // finer than 1 ps
  out = Time::ps(whole * scale + fpart);
  return true;
}

}  // namespace ibfab::sim

#include "fabric/model/link_rate.h"

#include <cctype>

namespace ibfab::fabric {
namespace {

struct SpeedInfo {
  const char* name;
  uint64_t lane_bps;  // data rate per lane after encoding
  uint8_t speed_bits, speed_ext_bits;
};

constexpr SpeedInfo kSpeeds[] = {
    {"SDR", 2'000'000'000, 1, 0},   {"DDR", 4'000'000'000, 2, 0},
    {"QDR", 8'000'000'000, 4, 0},   {"FDR", 13'636'363'636, 1, 1},
    {"EDR", 25'000'000'000, 1, 2},  {"HDR", 50'000'000'000, 1, 4},
    {"NDR", 100'000'000'000, 1, 8},
};

constexpr int kLanes[] = {1, 2, 4, 8, 12};
constexpr uint8_t kWidthBits[] = {1, 16, 2, 4, 8};

const SpeedInfo& info(LinkSpeed s) { return kSpeeds[static_cast<int>(s)]; }

}  // namespace

const char* to_string(LinkSpeed s) { return info(s).name; }

int LinkRate::lanes() const { return kLanes[static_cast<int>(width)]; }

uint64_t LinkRate::data_bps() const {
  // FDR is 14.0625 Gbaud x 64/66: not a whole number of b/s per lane; keep
  // it exact by computing it for all lanes at once.
  if (speed == LinkSpeed::FDR) return 14'062'500'000ull * 64 * static_cast<uint64_t>(lanes()) / 66;
  return info(speed).lane_bps * static_cast<uint64_t>(lanes());
}

sim::Time LinkRate::serialisation(uint32_t bytes) const {
  const uint64_t bps = data_bps();
  // bytes x 8e12 fits in 64 bits up to 2.3 MB, far beyond any packet: one
  // 64-bit division on the hot path; the 128-bit form only past that.
  if (bytes <= 2'000'000) {
    const uint64_t num = uint64_t{bytes} * 8'000'000'000'000ull;
    return sim::Time::ps(static_cast<int64_t>((num + bps - 1) / bps));
  }
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8'000'000'000'000ull;
  return sim::Time::ps(static_cast<int64_t>((num + bps - 1) / bps));
}

std::string LinkRate::str() const {
  return std::to_string(lanes()) + "x" + info(speed).name;
}

std::optional<LinkRate> LinkRate::parse(std::string_view text) {
  const auto x = text.find_first_of("xX");
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  int lanes = 0;
  for (char c : text.substr(0, x)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    lanes = lanes * 10 + (c - '0');
    if (lanes > 12) return std::nullopt;
  }
  LinkRate r;
  bool width_ok = false;
  for (int i = 0; i < 5; ++i)
    if (kLanes[i] == lanes) { r.width = static_cast<LinkWidth>(i); width_ok = true; }
  if (!width_ok) return std::nullopt;
  const std::string_view sp = text.substr(x + 1);
  for (int i = 0; i < 7; ++i) {
    if (sp == kSpeeds[i].name) { r.speed = static_cast<LinkSpeed>(i); return r; }
  }
  return std::nullopt;
}

uint8_t LinkRate::width_bits() const { return kWidthBits[static_cast<int>(width)]; }
uint8_t LinkRate::speed_bits() const { return info(speed).speed_bits; }
uint8_t LinkRate::speed_ext_bits() const { return info(speed).speed_ext_bits; }

std::optional<LinkRate> LinkRate::from_port_info(uint8_t width_bits, uint8_t speed_bits, uint8_t speed_ext_bits) {
  LinkRate r;
  bool width_ok = false, speed_ok = false;
  for (int i = 0; i < 5; ++i)
    if (kWidthBits[i] == width_bits) r.width = static_cast<LinkWidth>(i), width_ok = true;
  for (int i = 0; i < 7; ++i) {
    const SpeedInfo& sp = kSpeeds[i];
    const bool match = speed_ext_bits != 0 ? sp.speed_ext_bits == speed_ext_bits
                                           : sp.speed_ext_bits == 0 && sp.speed_bits == speed_bits;
    if (match) r.speed = static_cast<LinkSpeed>(i), speed_ok = true;
  }
  if (!width_ok || !speed_ok) return std::nullopt;
  return r;
}

uint8_t LinkRate::sa_rate() const {
  // The IBTA rate enum (PathRecord/MCMemberRecord Rate, ibv_rate) keyed by
  // the nominal rate in tenths of Gb/s. The enum is not monotonic.
  struct Code { uint32_t tenths; uint8_t code; };
  static constexpr Code kCodes[] = {
      {25, 2},     {50, 5},     {100, 3},    {140, 11},   {200, 6},   {250, 15},
      {280, 19},   {300, 4},    {400, 7},    {500, 20},   {560, 12},  {600, 8},
      {800, 9},    {1000, 16},  {1120, 13},  {1200, 10},  {1680, 14}, {2000, 17},
      {3000, 18},  {4000, 21},  {6000, 22},  {8000, 23},  {12000, 24}};
  static constexpr uint32_t kLaneTenths[] = {25, 50, 100, 140, 250, 500, 1000};
  const uint32_t tenths = kLaneTenths[static_cast<int>(speed)] * static_cast<uint32_t>(lanes());
  for (const Code& c : kCodes)
    if (c.tenths == tenths) return c.code;
  return 0;  // unreachable for valid speed/width pairs
}

}  // namespace ibfab::fabric

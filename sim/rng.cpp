#include "sim/rng.h"

#include <cmath>

namespace ibfab::sim {
namespace {

// Ziggurat tables for the exponential density f(x) = exp(-x), 256 layers of
// equal area kArea, base layer ending at kR. Layer i accepts a 53-bit
// uniform u at once when u < k[i]; the sample is then u * w[i].
constexpr double kR = 7.69711747013104972;
constexpr double kArea = 3.949659822581572e-3;
constexpr double kScale = 9007199254740992.0;  // 2^53

struct ExpTables {
  uint64_t k[256];
  double w[256];
  double f[256];

  ExpTables() {
    double x = kR, prev = kR;
    const double q = kArea / std::exp(-x);
    k[0] = static_cast<uint64_t>((x / q) * kScale);
    k[1] = 0;
    w[0] = q / kScale;
    w[255] = x / kScale;
    f[0] = 1.0;
    f[255] = std::exp(-x);
    for (int i = 254; i >= 1; --i) {
      x = -std::log(kArea / x + std::exp(-x));
      k[i + 1] = static_cast<uint64_t>((x / prev) * kScale);
      prev = x;
      f[i] = std::exp(-x);
      w[i] = x / kScale;
    }
  }
};

const ExpTables kExp;

}  // namespace

double Rng::standard_exponential() {
  for (;;) {
    const uint64_t r = next();
    const auto layer = static_cast<unsigned>(r & 255);
    const uint64_t u = r >> 11;
    if (u < kExp.k[layer]) return static_cast<double>(u) * kExp.w[layer];
    if (layer == 0) return kR - std::log1p(-uniform01());  // the tail, memoryless
    const double x = static_cast<double>(u) * kExp.w[layer];
    const double y = kExp.f[layer] + uniform01() * (kExp.f[layer - 1] - kExp.f[layer]);
    if (y < std::exp(-x)) return x;
  }
}

}  // namespace ibfab::sim

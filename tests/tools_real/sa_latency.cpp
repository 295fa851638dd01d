// A normal SA client, timed: COUNT GetTable queries of MCMemberRecords (as
// `saquery -g` sends), one at a time, from this process's port through
// libibumad (ibfab's under `ibfab exec`). Each waits up to 1 s for its
// answer, with no retry. Prints one line per query ("query N: X ms" or
// "query N: failed ...") and then
//   "sa_latency: COUNT queries, F failed, median X ms, p99 Y ms, max Z ms"
// Exits 0 when every query was answered with status 0.
//
// usage: sa_latency COUNT
#include <infiniband/umad.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "tests/tools_real/umad_sa_port.h"

using namespace ibfab;

int main(int argc, char** argv) {
  const int count = argc == 2 ? std::atoi(argv[1]) : 0;
  if (count < 1 || count > 1'000'000) {
    std::fprintf(stderr, "usage: sa_latency COUNT (1..1000000)\n");
    return 2;
  }
  testing::UmadSaPort p;
  if (!p.open()) return 2;
  std::vector<uint8_t> u(umad_size() + (1u << 20));
  std::vector<double> ms;
  int failed = 0;
  for (int i = 1; i <= count; ++i) {
    std::memset(u.data(), 0, umad_size() + 256);
    umad_set_addr(u.data(), p.sm_lid, 1, 0, 0x80010000);
    mad::SaBuffer m(static_cast<uint8_t*>(umad_get_mad(u.data())), 256);
    mad::init_sa_request(m, 0x12, mad::McMemberRecord::kAttributeId, static_cast<uint64_t>(i), 0);
    const auto start = std::chrono::steady_clock::now();
    int len = static_cast<int>(u.size() - umad_size());
    const bool sent = umad_send(p.fd, p.agent, u.data(), 256, 1000, 0) >= 0;
    const bool answered = sent && umad_recv(p.fd, u.data(), &len, 5000) >= 0 && umad_status(u.data()) == 0;
    const double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const auto* mad = static_cast<const uint8_t*>(umad_get_mad(u.data()));
    if (!answered || mad::sa_status(mad::ConstSaBuffer(mad, 256)) != 0) {
      std::printf("query %d: failed after %.3f ms (%s)\n", i, took,
                  !sent ? "not sent" : answered ? "SA status" : "no answer");
      ++failed;
      continue;
    }
    std::printf("query %d: %.3f ms\n", i, took);
    ms.push_back(took);
  }
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  std::printf("sa_latency: %d queries, %d failed, median %.3f ms, p99 %.3f ms, max %.3f ms\n", count, failed, at(0.5),
              at(0.99), ms.empty() ? 0.0 : ms.back());
  return failed == 0 ? 0 : 1;
}

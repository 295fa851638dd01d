// Membership churn through libibumad, for the served soak
// (tests/tools_real/served_soak.py) and bench/soak.py: CYCLES times, on
// group ff12:4001::(1 + i % GROUPS), join as a full member (0x1), join
// again as 0x9 and leave 0x1 (OpenSM's MLID-leak pattern: 0x8 stays), then
// leave 0x8. Two such processes on two hosts make the groups' trees grow
// and shrink at every cycle. Prints "cycles N" and exits 0 when every
// request was answered with status 0.
//
// usage: mcast_churn CYCLES [GROUPS]
#include <infiniband/umad.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "tests/tools_real/umad_sa_port.h"

using namespace ibfab;

namespace {

// One MCMemberRecord Set or Delete; true when the SA answered status 0.
bool ask(testing::UmadSaPort& p, std::vector<uint8_t>& u, uint64_t tid, uint8_t method, int group,
         uint8_t join_state) {
  std::memset(u.data(), 0, u.size());
  umad_set_addr(u.data(), p.sm_lid, 1, 0, 0x80010000);
  auto* mad = static_cast<uint8_t*>(umad_get_mad(u.data()));
  mad::SaBuffer m(mad, 256);
  const bool set = method == 0x02;
  mad::init_sa_request(m, method, mad::McMemberRecord::kAttributeId, tid,
                       set ? mad::mcm_comp::kCreateRequiredMask : mad::mcm_comp::kJoinRequiredMask);
  mad::McMemberRecord rec;
  char text[40];
  std::snprintf(text, sizeof text, "ff12:4001::%x", group);
  rec.mgid = *wire::Gid::parse(text);
  rec.port_gid = p.gid;
  rec.q_key = 0x11111111;
  rec.p_key = 0xFFFF;
  rec.join_state = join_state;
  rec.pack(mad::mutable_sa_data(m));
  int len = static_cast<int>(u.size() - umad_size());
  if (umad_send(p.fd, p.agent, u.data(), 256, 2000, 2) < 0 || umad_recv(p.fd, u.data(), &len, 10000) < 0) return false;
  mad = static_cast<uint8_t*>(umad_get_mad(u.data()));
  return umad_status(u.data()) == 0 && mad::sa_status(mad::ConstSaBuffer(mad, 256)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const long cycles = argc >= 2 ? std::atol(argv[1]) : 0;
  const int groups = argc >= 3 ? std::atoi(argv[2]) : 8;
  if (argc < 2 || argc > 3 || cycles < 1 || groups < 1 || groups > 0xFFFF) {
    std::fprintf(stderr, "usage: mcast_churn CYCLES [GROUPS (1..65535)]\n");
    return 2;
  }
  testing::UmadSaPort p;
  if (!p.open()) return 2;
  std::vector<uint8_t> u(umad_size() + 4096);
  uint64_t tid = 1;
  long done = 0;
  for (long i = 0; i < cycles; ++i) {
    const int g = 1 + static_cast<int>(i % groups);
    if (!ask(p, u, tid++, 0x02, g, 0x1) || !ask(p, u, tid++, 0x02, g, 0x9) || !ask(p, u, tid++, 0x15, g, 0x1) ||
        !ask(p, u, tid++, 0x15, g, 0x8)) {
      std::fprintf(stderr, "cycle %ld: a request failed\n", i);
      break;
    }
    ++done;
  }
  std::printf("cycles %ld\n", done);
  return done == cycles ? 0 : 1;
}

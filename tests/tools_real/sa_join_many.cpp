// Joins COUNT multicast groups ff12:4001::1 .. ff12:4001::COUNT as a full
// member, from this process's port, through libibumad (a group that does
// not exist yet is created). Prints "joined N" and exits 0 when every join
// was answered with status 0. For the tests that show ibfab has none of
// ibsim's limits (many groups, MLIDs above 0xC3FF).
//
// usage: sa_join_many COUNT
#include <infiniband/umad.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"

using namespace ibfab;

int main(int argc, char** argv) {
  const int count = argc == 2 ? std::atoi(argv[1]) : 0;
  if (count < 1 || count > 0xFFFF) {
    std::fprintf(stderr, "usage: sa_join_many COUNT (1..65535)\n");
    return 2;
  }
  umad_port_t port;
  if (umad_init() < 0 || umad_get_port(nullptr, 0, &port) < 0) return 2;
  const uint16_t sm_lid = static_cast<uint16_t>(port.sm_lid);
  const wire::Gid me = wire::Gid::from(be64toh(port.gid_prefix), be64toh(port.port_guid));
  umad_release_port(&port);
  const int fd = umad_open_port(nullptr, 0);
  const int agent = fd < 0 ? -1 : umad_register(fd, 0x03, 2, 1, nullptr);
  if (agent < 0) return 2;
  std::vector<uint8_t> u(umad_size() + 4096);
  int joined = 0;
  for (int i = 1; i <= count; ++i) {
    std::memset(u.data(), 0, u.size());
    umad_set_addr(u.data(), sm_lid, 1, 0, 0x80010000);
    auto* mad = static_cast<uint8_t*>(umad_get_mad(u.data()));
    mad::SaBuffer m(mad, 256);
    mad::init_sa_request(m, 0x02, mad::McMemberRecord::kAttributeId, static_cast<uint64_t>(i),
                         mad::mcm_comp::kCreateRequiredMask);
    mad::McMemberRecord rec;
    char text[40];
    std::snprintf(text, sizeof text, "ff12:4001::%x", i);
    rec.mgid = *wire::Gid::parse(text);
    rec.port_gid = me;
    rec.q_key = 0x11111111;
    rec.p_key = 0xFFFF;
    rec.join_state = 1;
    rec.pack(mad::mutable_sa_data(m));
    int len = static_cast<int>(u.size() - umad_size());
    if (umad_send(fd, agent, u.data(), 256, 2000, 2) < 0 || umad_recv(fd, u.data(), &len, 5000) < 0) break;
    mad = static_cast<uint8_t*>(umad_get_mad(u.data()));
    if (umad_status(u.data()) != 0 || mad::sa_status(mad::ConstSaBuffer(mad, 256)) != 0) break;
    ++joined;
  }
  std::printf("joined %d\n", joined);
  umad_close_port(fd);
  return joined == count ? 0 : 1;
}

// A small umad client for the record differential (sa_records_diff.py):
// registers, from this process's port, one ServiceRecord (infinite lease)
// and one InformInfo subscription (trap 66), and prints each answer's
// status, so that the ServiceRecord and InformInfoRecord tables have
// something to compare. It uses only libibumad (ibfab's under `ibfab exec`).
#include <infiniband/umad.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "fabric/mad/notice.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/mad/sa/service_record.h"
#include "fabric/wire/byte_cursor.h"
#include "tests/tools_real/umad_sa_port.h"

using namespace ibfab;

namespace {

constexpr uint8_t kSet = 0x02;

// Sends one Set of `record` and prints "WHAT: status=0x...." from the answer.
template <class R>
bool set(int fd, int agent, uint16_t sm_lid, uint32_t tid, uint64_t mask, const R& record,
         const char* what) {
  std::vector<uint8_t> umad(umad_size() + 256);
  umad_set_addr(umad.data(), sm_lid, 1, 0, 0x80010000);
  auto* mad = static_cast<uint8_t*>(umad_get_mad(umad.data()));
  mad::SaBuffer m(mad, 256);
  mad::init_sa_request(m, kSet, R::kAttributeId, tid, mask);
  record.pack(mad::mutable_sa_data(m));
  int len = 256;
  if (umad_send(fd, agent, umad.data(), 256, 2000, 2) < 0 ||
      umad_recv(fd, umad.data(), &len, 5000) < 0 || umad_status(umad.data()) != 0) {
    std::printf("%s: no answer\n", what);
    return false;
  }
  mad = static_cast<uint8_t*>(umad_get_mad(umad.data()));
  const uint16_t status = mad::sa_status(mad::ConstSaBuffer(mad, 256));
  std::printf("%s: status=0x%04x\n", what, status);
  return status == 0;
}

}  // namespace

int main() {
  testing::UmadSaPort p;
  if (!p.open()) return 2;
  mad::ServiceRecord s;
  s.service_id = 0x0000000010000ABCull;
  s.service_gid = p.gid;
  s.service_p_key = 0xFFFF;
  std::memcpy(s.service_name.data(), "ibfab.diff", 10);
  s.service_key[0] = 0x5A;
  s.data16[1] = 0x1234;
  s.data64[0] = 0x0102030405060708ull;
  namespace sr = mad::sr_comp;
  const bool ok_s = set(p.fd, p.agent, p.sm_lid, 0x200, sr::kServiceId | sr::kServiceGid | sr::kServicePKey |
                                                      sr::kServiceName | sr::kServiceKey,
                        s, "ServiceRecord");
  mad::InformInfo ii;
  ii.lid_range_begin = mad::inform_info::kAllLids;
  ii.is_generic = 1;
  ii.subscribe = mad::inform_info::kSubscribe;
  ii.type = mad::inform_info::kAllTypes;
  ii.trap_number = mad::trap_number::kMcGroupCreated;
  ii.producer_type = mad::inform_info::kAllProducers;
  const bool ok_i = set(p.fd, p.agent, p.sm_lid, 0x201, 0, ii, "InformInfo");
  return ok_s && ok_i ? 0 : 1;
}

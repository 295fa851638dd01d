// A small umad client for the differential test (sa_diff.py): one fixed
// sequence of MCMemberRecord requests from this process's port to the SM's
// SA, each answer printed as one line of its fields. Run against the
// built-in SA and against OpenSM's, the two outputs are compared field by
// field. It uses only libibumad (whichever is loaded: ibfab's under
// `ibfab exec`).
//
// `sa_join_diff partitions` instead prints this port's GUID and then the
// status of joins into two partitions' groups (partitions_diff.py): their
// IPoIB broadcast groups and a group created with their P_Key, which only
// a member of the partition may do.
#include <infiniband/umad.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/wire/byte_cursor.h"
#include "tests/tools_real/umad_sa_port.h"

using namespace ibfab;

namespace {

struct Op {
  const char* what;
  uint8_t method;
  const char* mgid;  // "0": ask the SA to assign one
  uint8_t join_state;
  uint64_t mask;
  uint32_t qkey = 0x11111111;
  uint16_t pkey = 0xFFFF;
};

namespace comp = mad::mcm_comp;
constexpr uint8_t kSet = 0x02, kGet = 0x01, kDelete = 0x15;

const std::vector<Op> kOps = {
    {"create full", kSet, "ff12:4001::11", 0x1, comp::kCreateRequiredMask},
    {"create with a zero MGID", kSet, "0", 0x1, comp::kCreateRequiredMask},
    {"create send-only full", kSet, "ff12:4001::12", 0x8, comp::kCreateRequiredMask},
    {"add non-member", kSet, "ff12:4001::11", 0x2, comp::kJoinRequiredMask},
    {"get", kGet, "ff12:4001::11", 0x0, comp::kMgid | comp::kPortGid},
    {"leave full", kDelete, "ff12:4001::11", 0x1, comp::kJoinRequiredMask},
    {"wrong Q_Key", kSet, "ff12:4001::11", 0x1, comp::kJoinRequiredMask | comp::kQKey, 0x22222222},
    {"create, insufficient components", kSet, "ff12:4001::13", 0x1, comp::kJoinRequiredMask},
    {"leave a group that does not exist", kDelete, "ff12:4001::99", 0x1, comp::kJoinRequiredMask},
    {"leave send-only full: group goes", kDelete, "ff12:4001::12", 0x8, comp::kJoinRequiredMask},
    {"create full again", kSet, "ff12:4001::14", 0x1, comp::kCreateRequiredMask},
};

std::string hex(const uint8_t* b, std::size_t n) {
  std::string s;
  char buf[4];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", b[i]);
    s += buf;
  }
  return s;
}

constexpr uint64_t kPartitionJoin = comp::kMgid | comp::kPortGid | comp::kPKey | comp::kJoinState;

const std::vector<Op> kPartitionOps = {
    {"join TenantA's broadcast group", kSet, "ff12:401b:8001::ffff:ffff", 0x1, kPartitionJoin, 0, 0x8001},
    {"join TenantB's broadcast group", kSet, "ff12:401b:8002::ffff:ffff", 0x1, kPartitionJoin, 0, 0x8002},
    {"create a group in TenantA", kSet, "ff12:4001::a1", 0x1, comp::kCreateRequiredMask, 0x11111111, 0x8001},
    {"create a group in TenantB", kSet, "ff12:4001::b1", 0x1, comp::kCreateRequiredMask, 0x11111111, 0x8002},
};

}  // namespace

int main(int argc, char** argv) {
  const bool partitions = argc > 1 && std::strcmp(argv[1], "partitions") == 0;
  testing::UmadSaPort port;
  if (!port.open()) return 2;
  const int fd = port.fd, agent = port.agent;
  const uint16_t sm_lid = port.sm_lid;
  const wire::Gid my_gid = port.gid;
  std::vector<uint8_t> umad(umad_size() + 4096);
  uint32_t tid = 0x100;
  const std::vector<Op>& ops = partitions ? kPartitionOps : kOps;
  if (partitions) std::printf("port 0x%016llx\n", static_cast<unsigned long long>(my_gid.guid()));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    std::memset(umad.data(), 0, umad.size());
    umad_set_addr(umad.data(), sm_lid, 1, 0, 0x80010000);
    auto* mad = static_cast<uint8_t*>(umad_get_mad(umad.data()));
    mad::SaBuffer m(mad, 256);
    mad::init_sa_request(m, op.method, mad::McMemberRecord::kAttributeId, ++tid, op.mask);
    mad::McMemberRecord rec;
    if (std::strcmp(op.mgid, "0") != 0) rec.mgid = *wire::Gid::parse(op.mgid);
    rec.port_gid = my_gid;
    rec.q_key = op.qkey;
    rec.p_key = op.pkey;
    rec.join_state = op.join_state;
    rec.pack(mad::mutable_sa_data(m));
    if (umad_send(fd, agent, umad.data(), 256, 2000, 2) < 0) {
      std::printf("%zu %s: send failed\n", i + 1, op.what);
      continue;
    }
    int len = static_cast<int>(umad.size() - umad_size());
    if (umad_recv(fd, umad.data(), &len, 5000) < 0 || umad_status(umad.data()) != 0) {
      std::printf("%zu %s: no answer\n", i + 1, op.what);
      continue;
    }
    mad = static_cast<uint8_t*>(umad_get_mad(umad.data()));
    if (partitions) {  // the answer's fields follow each SM's MLIDs: the status says it
      std::printf("%zu %s: status=0x%04x\n", i + 1, op.what, mad::sa_status(mad::ConstSaBuffer(mad, 256)));
      continue;
    }
    const mad::McMemberRecord r = mad::McMemberRecord::unpack(mad::sa_data(mad::ConstSaBuffer(mad, 256)));
    const std::string mgid = std::strcmp(op.mgid, "0") == 0 && r.mgid.raw[0] == 0xFF
                                 ? "assigned(" + hex(r.mgid.raw.data(), 2) + ")"
                                 : hex(r.mgid.raw.data(), 16);
    std::printf("%zu %s: method=0x%02x status=0x%04x mgid=%s mlid=0x%04x join_state=0x%x qkey=0x%08x mtu=%u/%u "
                "rate=%u/%u pkey=0x%04x sl=%u flow=0x%x hop=%u scope=%u tclass=%u plt=%u/%u proxy=%u\n",
                i + 1, op.what, mad[3], mad::sa_status(mad::ConstSaBuffer(mad, 256)), mgid.c_str(), r.mlid,
                r.join_state, r.q_key, r.mtu_selector, r.mtu, r.rate_selector, r.rate, r.p_key, r.sl, r.flow_label,
                r.hop_limit, r.scope, r.tclass, r.packet_life_time_selector, r.packet_life_time, r.proxy_join);
  }
  return 0;
}

// Addresses and routes: binding, address and route resolution, and what
// the engine answers about an id afterwards, written into rdma_cm_id as
// rdma-core's ucma_query_addr, ucma_query_gid and ucma_query_path do.
#include <infiniband/ib.h>
#include <infiniband/sa.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// A PathRecord as rdma-core's ucma_convert_path leaves it: LIDs, P_Key and
// flow label in network order, selectors "exactly", one path, and the
// preference the kernel's flags give (GMP, primary, bidirectional).
ibv_sa_path_rec to_sa_path(const api::CmPath& p) {
  ibv_sa_path_rec s{};
  std::memcpy(s.dgid.raw, p.dgid, sizeof s.dgid.raw);
  std::memcpy(s.sgid.raw, p.sgid, sizeof s.sgid.raw);
  s.dlid = htobe16(p.dlid);
  s.slid = htobe16(p.slid);
  s.raw_traffic = 0;
  s.flow_label = htobe32(p.flow_label);
  s.hop_limit = p.hop_limit;
  s.traffic_class = p.traffic_class;
  s.reversible = p.reversible;
  s.numb_path = 1;
  s.pkey = htobe16(p.pkey);
  s.sl = p.sl & 0xF;
  s.mtu_selector = 2;
  s.mtu = p.mtu & 0x1F;
  s.rate_selector = 2;
  s.rate = p.rate & 0x1F;
  s.packet_life_time_selector = 2;
  s.packet_life_time = p.packet_life_time & 0x1F;
  s.preference = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
  return s;
}

}  // namespace

socklen_t addr_len(const sockaddr* addr) {
  if (!addr) return 0;
  switch (addr->sa_family) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    case AF_IB: return sizeof(sockaddr_ib);
    default: return 0;
  }
}

int query(Id& id, bool path) {
  const api::CmIdRequest req{id.handle, 0};
  const api::CmReply r = request(api::MsgType::CmQueryId, &req, sizeof req);
  if (r.value < 0) return fail(static_cast<int>(-r.value));
  const api::CmIdInfo& info = r.info;
  rdma_addr& addr = id.id.route.addr;
  if (info.src.ss_family) std::memcpy(&addr.src_storage, &info.src, sizeof addr.src_storage);
  if (info.dst.ss_family) std::memcpy(&addr.dst_storage, &info.dst, sizeof addr.dst_storage);
  if (!id.device && info.node_guid) {
    CmDevice* d = acquire_device(htobe64(info.node_guid));
    if (!d) return -1;
    id.device = d;
    id.id.verbs = d->verbs;
    id.id.pd = d->pd;
    id.id.port_num = info.port;
    addr.addr.ibaddr.pkey = htobe16(info.pkey);
  }
  std::memcpy(addr.addr.ibaddr.sgid.raw, info.sgid, sizeof info.sgid);
  std::memcpy(addr.addr.ibaddr.dgid.raw, info.dgid, sizeof info.dgid);
  if (path && info.num_paths) {
    auto* rec = static_cast<ibv_sa_path_rec*>(std::malloc(sizeof(ibv_sa_path_rec)));
    if (!rec) return fail(ENOMEM);
    *rec = to_sa_path(info.path);
    std::free(id.id.route.path_rec);
    id.id.route.path_rec = rec;
    id.id.route.num_paths = 1;  // the engine resolves one path
  }
  return 0;
}

int set_ib_path(Id& id, const void* optval, size_t optlen) {
  constexpr uint32_t kWanted = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
  if (optlen % sizeof(ibv_path_data) != 0) return fail(EINVAL);
  const auto* paths = static_cast<const ibv_path_data*>(optval);
  const std::size_t n = optlen / sizeof(ibv_path_data);
  const ibv_path_data* path = nullptr;
  for (std::size_t i = 0; i < n && !path; ++i)
    if (paths[i].flags == kWanted) path = &paths[i];
  if (!path) return fail(EINVAL);
  api::CmSetIbPath req;
  req.id = id.handle;
  static_assert(sizeof req.path_record == sizeof path->path);
  std::memcpy(req.path_record, &path->path, sizeof req.path_record);
  const api::CmReply r = request(api::MsgType::CmSetIbPath, &req, sizeof req);
  return r.value < 0 ? fail(static_cast<int>(-r.value)) : 0;
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_bind_addr(rdma_cm_id* id, sockaddr* addr) {
  if (init() != 0) return -1;
  const socklen_t len = addr_len(addr);
  if (!len || !id) return fail(EINVAL);
  Id& i = *Id::from(id);
  api::CmAddrRequest req;
  req.id = i.handle;
  std::memcpy(&req.src, addr, len);
  const api::CmReply r = request(api::MsgType::CmBindAddr, &req, sizeof req);
  if (r.value < 0) return fail(static_cast<int>(-r.value));
  i.state = State::Bound;
  return query(i, false);
}

IBFAB_RDMACM_EXPORT int rdma_resolve_addr(rdma_cm_id* id, sockaddr* src_addr, sockaddr* dst_addr, int timeout_ms) {
  if (init() != 0) return -1;
  const socklen_t dst_len = addr_len(dst_addr);
  const socklen_t src_len = addr_len(src_addr);
  if (!dst_len || (src_addr && !src_len) || !id) return fail(EINVAL);
  Id& i = *Id::from(id);
  api::CmAddrRequest req;
  req.id = i.handle;
  req.timeout_ms = static_cast<uint32_t>(timeout_ms);
  if (src_addr) std::memcpy(&req.src, src_addr, src_len);
  std::memcpy(&req.dst, dst_addr, dst_len);
  const api::CmReply r = request(api::MsgType::CmResolveAddr, &req, sizeof req);
  if (r.value < 0) return fail(static_cast<int>(-r.value));
  std::memcpy(&id->route.addr.dst_storage, dst_addr, dst_len);
  i.state = State::Resolving;
  return complete(i);
}

// The engine asks the SA for the path (rdma-core tries ibacm first; there
// is none here).
IBFAB_RDMACM_EXPORT int rdma_resolve_route(rdma_cm_id* id, int timeout_ms) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);  // the kernel: no device bound yet
  Id& i = *Id::from(id);
  const api::CmIdRequest req{i.handle, static_cast<uint32_t>(timeout_ms)};
  const api::CmReply r = request(api::MsgType::CmResolveRoute, &req, sizeof req);
  if (r.value < 0) return fail(static_cast<int>(-r.value));
  return complete(i);
}

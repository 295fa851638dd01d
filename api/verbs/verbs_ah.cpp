// Address handles: the destination of UD sends, kept in the client (the
// send WQE carries the address). From a completion: the reply path to its
// sender, as ibv_init_ah_from_wc(3) describes.
#include <cerrno>
#include <cstring>

#include "api/verbs/export.h"
#include "api/verbs/verbs_internal.h"

using namespace ibfab;
using namespace ibfab::verbs;

IBFAB_VERBS_EXPORT ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  if (!pd || !attr) return fail_null<ibv_ah>(EINVAL);
  if (attr->port_num < 1 || attr->port_num > api::kMaxPorts || attr->dlid == 0) return fail_null<ibv_ah>(EINVAL);
  // A multicast LID (0xC000-0xFFFE) needs the GRH that names the group.
  if (attr->dlid >= 0xC000 && attr->dlid != 0xFFFF && !attr->is_global) return fail_null<ibv_ah>(EINVAL);
  auto* a = new Ah;
  a->ah.context = pd->context;
  a->ah.pd = pd;
  a->attr = *attr;
  return &a->ah;
}

IBFAB_VERBS_EXPORT int ibv_destroy_ah(ibv_ah* ah) {
  if (!ah) return fail(EINVAL);
  delete reinterpret_cast<Ah*>(ah);
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_init_ah_from_wc(ibv_context* context, uint8_t port_num, ibv_wc* wc, ibv_grh* grh,
                                           ibv_ah_attr* ah_attr) {
  if (!context || !wc || !ah_attr) return errno = EINVAL, -1;
  std::memset(ah_attr, 0, sizeof *ah_attr);
  ah_attr->dlid = wc->slid;
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if (wc->wc_flags & IBV_WC_GRH) {
    if (!grh) return errno = EINVAL, -1;
    ah_attr->is_global = 1;
    ah_attr->grh.dgid = grh->sgid;
    const uint32_t flow = be32toh(grh->version_tclass_flow);
    ah_attr->grh.flow_label = flow & 0xFFFFF;
    ah_attr->grh.traffic_class = static_cast<uint8_t>((flow >> 20) & 0xFF);
    ah_attr->grh.hop_limit = 0xFF;
    // The reply leaves from the GID the message came to; a multicast
    // destination is answered from the port GID.
    ibv_gid port_gid;
    if (ibv_query_gid(context, port_num, 0, &port_gid) != 0) return -1;
    if (grh->dgid.raw[0] != 0xFF && std::memcmp(&grh->dgid, &port_gid, sizeof port_gid) != 0)
      return errno = ENOENT, -1;
    ah_attr->grh.sgid_index = 0;
  }
  return 0;
}

IBFAB_VERBS_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port_num) {
  if (!pd) return fail_null<ibv_ah>(EINVAL);
  ibv_ah_attr attr;
  if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0) return nullptr;
  return ibv_create_ah(pd, &attr);
}

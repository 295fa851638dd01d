// rdma_getaddrinfo: libc's getaddrinfo underneath, its first answer turned
// into an rdma_addrinfo as rdma-core's addrinfo.c does (QP type and port
// space from the hints or the socket type and protocol, the address as the
// source of a passive end or the destination of an active one; AF_IB from
// a numeric IPv6 address when the hints ask for it). There is no ibacm to
// ask for routes: ai_route stays empty. A libc failure is returned as is
// (an EAI_* code), as rdma-core returns it.
#include <infiniband/ib.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

addrinfo to_libc_hints(const rdma_addrinfo& rai) {
  addrinfo ai{};
  if (rai.ai_flags & RAI_PASSIVE) ai.ai_flags = AI_PASSIVE;
  if (rai.ai_flags & RAI_NUMERICHOST) ai.ai_flags |= AI_NUMERICHOST;
  if (rai.ai_family != AF_IB) ai.ai_family = rai.ai_family;
  switch (rai.ai_qp_type) {
    case IBV_QPT_RC:
    case IBV_QPT_UC:
    case IBV_QPT_XRC_SEND:
    case IBV_QPT_XRC_RECV: ai.ai_socktype = SOCK_STREAM; break;
    case IBV_QPT_UD: ai.ai_socktype = SOCK_DGRAM; break;
    default: break;
  }
  switch (rai.ai_port_space) {
    case RDMA_PS_TCP: ai.ai_protocol = IPPROTO_TCP; break;
    case RDMA_PS_IPOIB:
    case RDMA_PS_UDP: ai.ai_protocol = IPPROTO_UDP; break;
    case RDMA_PS_IB:
      if (ai.ai_socktype == SOCK_STREAM) ai.ai_protocol = IPPROTO_TCP;
      else if (ai.ai_socktype == SOCK_DGRAM) ai.ai_protocol = IPPROTO_UDP;
      break;
    default: break;
  }
  return ai;
}

int copy_addr(sockaddr*& dst, socklen_t& dst_len, const void* src, socklen_t len) {
  dst = static_cast<sockaddr*>(std::malloc(len));
  if (!dst) return fail(ENOMEM);
  std::memcpy(dst, src, len);
  dst_len = len;
  return 0;
}

// An IPv6 address as AF_IB: its 16 bytes the GID, the service id from the
// port space and port (rdma-core's ucma_convert_in6 and ucma_set_sid).
int to_ib(int ps, sockaddr*& dst, socklen_t& dst_len, const sockaddr_in6& in6) {
  auto* sib = static_cast<sockaddr_ib*>(std::calloc(1, sizeof(sockaddr_ib)));
  if (!sib) return fail(ENOMEM);
  sib->sib_family = AF_IB;
  sib->sib_pkey = htobe16(0xFFFF);
  sib->sib_flowinfo = in6.sin6_flowinfo;
  std::memcpy(&sib->sib_addr, &in6.sin6_addr, sizeof in6.sin6_addr);
  const uint16_t port = be16toh(in6.sin6_port);
  sib->sib_sid = htobe64((static_cast<uint64_t>(ps) << 16) + port);
  if (ps) sib->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
  if (port) sib->sib_sid_mask |= htobe64(RDMA_IB_IP_PORT_MASK);
  sib->sib_scope_id = in6.sin6_scope_id;
  dst = reinterpret_cast<sockaddr*>(sib);
  dst_len = sizeof(sockaddr_ib);
  return 0;
}

int from_libc(rdma_addrinfo& rai, const rdma_addrinfo& hints, const addrinfo& ai) {
  if (hints.ai_qp_type) rai.ai_qp_type = hints.ai_qp_type;
  else if (ai.ai_socktype == SOCK_STREAM) rai.ai_qp_type = IBV_QPT_RC;
  else if (ai.ai_socktype == SOCK_DGRAM) rai.ai_qp_type = IBV_QPT_UD;
  if (hints.ai_port_space) rai.ai_port_space = hints.ai_port_space;
  else if (ai.ai_protocol == IPPROTO_TCP) rai.ai_port_space = RDMA_PS_TCP;
  else if (ai.ai_protocol == IPPROTO_UDP) rai.ai_port_space = RDMA_PS_UDP;
  const bool passive = ai.ai_flags & AI_PASSIVE;
  if (passive) rai.ai_flags = RAI_PASSIVE;
  char*& canonname = passive ? rai.ai_src_canonname : rai.ai_dst_canonname;
  if (ai.ai_canonname) canonname = strdup(ai.ai_canonname);
  sockaddr*& addr = passive ? rai.ai_src_addr : rai.ai_dst_addr;
  socklen_t& len = passive ? rai.ai_src_len : rai.ai_dst_len;
  const bool ib = (hints.ai_flags & RAI_FAMILY) && hints.ai_family == AF_IB && (hints.ai_flags & RAI_NUMERICHOST) &&
                  ai.ai_family == AF_INET6;
  if (ib) {
    rai.ai_family = AF_IB;
    return to_ib(rai.ai_port_space, addr, len, *reinterpret_cast<const sockaddr_in6*>(ai.ai_addr));
  }
  rai.ai_family = ai.ai_family;
  return copy_addr(addr, len, ai.ai_addr, ai.ai_addrlen);
}

}  // namespace
}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints,
                                         rdma_addrinfo** res) {
  if (!node && !service && !hints) return fail(EINVAL);
  if (init() != 0) return -1;
  if (!res) return fail(EINVAL);
  static const rdma_addrinfo nohints{};
  auto* rai = static_cast<rdma_addrinfo*>(std::calloc(1, sizeof(rdma_addrinfo)));
  if (!rai) return fail(ENOMEM);
  int ret = 0;
  if (node || service) {
    addrinfo* ai = nullptr;
    if (hints) {
      const addrinfo want = to_libc_hints(*hints);
      ret = getaddrinfo(node, service, &want, &ai);
    } else {
      ret = getaddrinfo(node, service, nullptr, &ai);
    }
    if (ret == 0) {
      ret = from_libc(*rai, hints ? *hints : nohints, *ai);
      freeaddrinfo(ai);
    }
  } else {
    rai->ai_flags = hints->ai_flags;
    rai->ai_family = hints->ai_family;
    rai->ai_qp_type = hints->ai_qp_type;
    rai->ai_port_space = hints->ai_port_space;
    if (hints->ai_dst_len) ret = copy_addr(rai->ai_dst_addr, rai->ai_dst_len, hints->ai_dst_addr, hints->ai_dst_len);
  }
  if (ret == 0 && !rai->ai_src_len && hints && hints->ai_src_len)
    ret = copy_addr(rai->ai_src_addr, rai->ai_src_len, hints->ai_src_addr, hints->ai_src_len);
  if (ret != 0) {
    rdma_freeaddrinfo(rai);
    return ret;
  }
  *res = rai;
  return 0;
}

IBFAB_RDMACM_EXPORT void rdma_freeaddrinfo(rdma_addrinfo* res) {
  while (res) {
    rdma_addrinfo* next = res->ai_next;
    std::free(res->ai_connect);
    std::free(res->ai_route);
    std::free(res->ai_src_canonname);
    std::free(res->ai_dst_canonname);
    std::free(res->ai_src_addr);
    std::free(res->ai_dst_addr);
    std::free(res);
    res = next;
  }
}

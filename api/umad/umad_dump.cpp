// umad_addr_dump and umad_dump: a human-readable header on stderr, one
// warn() line each, in rdma-core 44's wording and field order. Values are
// shown as the real library shows them: qpn, qkey and lid converted to host
// order, flow_label as the raw big-endian word, the GID as 32 hex digits.
#include <endian.h>
#include <infiniband/umad.h>

#include <cstdint>

#include "api/umad/export.h"
#include "api/umad/umad_state.h"

IBFAB_UMAD_EXPORT void umad_addr_dump(ib_mad_addr_t* addr) {
  static constexpr char kHex[] = "0123456789abcdef";
  char gid[2 * sizeof addr->gid + 1];
  for (std::size_t i = 0; i < sizeof addr->gid; ++i) {
    gid[2 * i] = kHex[addr->gid[i] >> 4];
    gid[2 * i + 1] = kHex[addr->gid[i] & 0xf];
  }
  gid[sizeof gid - 1] = '\0';
  ibfab::umad::warn("umad_addr_dump",
                    "qpn %d qkey 0x%x lid %u sl %d\n"
                    "grh_present %d gid_index %d hop_limit %d traffic_class %d flow_label 0x%x "
                    "pkey_index 0x%x\n"
                    "Gid 0x%s",
                    static_cast<int>(be32toh(addr->qpn)), be32toh(addr->qkey),
                    static_cast<unsigned>(be16toh(addr->lid)), addr->sl, addr->grh_present,
                    addr->gid_index, addr->hop_limit, addr->traffic_class, addr->flow_label,
                    addr->pkey_index, gid);
}

IBFAB_UMAD_EXPORT void umad_dump(void* umad) {
  auto* mad = static_cast<ib_user_mad*>(umad);
  ibfab::umad::warn("umad_dump", "agent id %d status %x timeout %d", static_cast<int>(mad->agent_id),
                    mad->status, static_cast<int>(mad->timeout_ms));
  umad_addr_dump(&mad->addr);
}

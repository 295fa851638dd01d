// Accessors of a umad buffer: a struct ib_user_mad header followed by the MAD.
// None of them checks its pointer; like rdma-core's, they trust the caller.
//
// Byte orders (ib_mad_addr): qpn, qkey, lid and flow_label are big-endian in
// the buffer; pkey_index is host order. umad_set_addr converts from host
// order, umad_set_addr_net copies values already in network order, and
// umad_set_grh converts the flow label it is given from host order.
#include <endian.h>
#include <infiniband/umad.h>

#include <cstdint>

#include "api/umad/export.h"
#include "api/umad/umad_state.h"

namespace {

ib_user_mad* header(void* umad) { return static_cast<ib_user_mad*>(umad); }

}  // namespace

// Where the MAD starts: ib_user_mad::data once a port is open, else
// &addr.pkey_index (the old header is 8 bytes shorter). Always umad + umad_size().
IBFAB_UMAD_EXPORT void* umad_get_mad(void* umad) {
  return static_cast<std::uint8_t*>(umad) + ibfab::umad::header_size();
}

// The kernel's completion status: 0, or an errno such as ETIMEDOUT.
IBFAB_UMAD_EXPORT int umad_status(void* umad) { return static_cast<int>(header(umad)->status); }

IBFAB_UMAD_EXPORT ib_mad_addr_t* umad_get_mad_addr(void* umad) { return &header(umad)->addr; }

// Sets the destination from host-order values; leaves the GRH fields,
// path_bits and pkey_index alone. Returns 0.
IBFAB_UMAD_EXPORT int umad_set_addr(void* umad, int dlid, int dqp, int sl, int qkey) {
  IBFAB_UMAD_TRACE("umad_set_addr", "umad %p dlid %u dqp %d sl %d, qkey %x", umad,
                   static_cast<unsigned>(dlid), dqp, sl, static_cast<unsigned>(qkey));
  ib_mad_addr& addr = header(umad)->addr;
  addr.qpn = htobe32(static_cast<std::uint32_t>(dqp));
  addr.lid = htobe16(static_cast<std::uint16_t>(dlid));
  addr.qkey = htobe32(static_cast<std::uint32_t>(qkey));
  addr.sl = static_cast<std::uint8_t>(sl);
  return 0;
}

// As umad_set_addr, but dlid, dqp and qkey are already in network order.
IBFAB_UMAD_EXPORT int umad_set_addr_net(void* umad, __be16 dlid, __be32 dqp, int sl, __be32 qkey) {
  IBFAB_UMAD_TRACE("umad_set_addr_net", "umad %p dlid %u dqp %d sl %d qkey %x", umad,
                   static_cast<unsigned>(be16toh(dlid)), static_cast<int>(be32toh(dqp)), sl,
                   be32toh(qkey));
  ib_mad_addr& addr = header(umad)->addr;
  addr.qpn = dqp;
  addr.lid = dlid;
  addr.qkey = qkey;
  addr.sl = static_cast<std::uint8_t>(sl);
  return 0;
}

// With an address (a struct ib_mad_addr whose flow_label is in host order):
// sets grh_present and copies the GID, flow label (to network order), hop
// limit and traffic class; gid_index is not copied. With NULL: clears
// grh_present only. Returns 0.
IBFAB_UMAD_EXPORT int umad_set_grh(void* umad, void* mad_addr) {
  ib_mad_addr& addr = header(umad)->addr;
  if (mad_addr == nullptr) {
    addr.grh_present = 0;
    return 0;
  }
  const auto& from = *static_cast<const ib_mad_addr*>(mad_addr);
  addr.grh_present = 1;
  addr.ib_gid = from.ib_gid;
  addr.flow_label = htobe32(static_cast<std::uint32_t>(from.flow_label));
  addr.hop_limit = from.hop_limit;
  addr.traffic_class = from.traffic_class;
  return 0;
}

// pkey_index exists only in the new header: before a port is opened
// umad_set_pkey writes nothing and umad_get_pkey returns 0. Both return 0 /
// the index in host order.
IBFAB_UMAD_EXPORT int umad_set_pkey(void* umad, int pkey_index) {
  if (ibfab::umad::port_opened()) header(umad)->addr.pkey_index = static_cast<std::uint16_t>(pkey_index);
  return 0;
}

IBFAB_UMAD_EXPORT int umad_get_pkey(void* umad) {
  return ibfab::umad::port_opened() ? header(umad)->addr.pkey_index : 0;
}

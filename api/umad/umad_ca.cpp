// libibumad's CA and port discovery, from the engine's view of the host
// (the HCA as the SM configured it), not from sysfs. The process's host has
// one HCA, named "ibfab0".
#include <infiniband/umad.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "api/client/session.h"
#include "api/umad/export.h"
#include "api/umad/umad_ca.h"

namespace ibfab::umad {

namespace {

const char* name_or_default(const char* ca_name) { return ca_name ? ca_name : kCaName; }

void fill_port(const char* ca_name, const api::PortRecord& r, umad_port_t& out) {
  std::memset(&out, 0, sizeof out);
  std::strncpy(out.ca_name, name_or_default(ca_name), sizeof out.ca_name - 1);
  out.portnum = r.number;
  out.base_lid = r.lid;
  out.lmc = r.lmc;
  out.sm_lid = r.sm_lid;
  out.sm_sl = r.sm_sl;
  out.state = r.state;
  out.phys_state = r.phys_state;
  out.rate = r.rate_mbps / 1000;
  out.capmask = htobe32(r.capability_mask);
  out.gid_prefix = htobe64(r.gid_prefix);
  out.port_guid = htobe64(r.port_guid);
  out.pkeys_size = r.pkey_count;
  out.pkeys = static_cast<uint16_t*>(std::calloc(r.pkey_count ? r.pkey_count : 1, sizeof(uint16_t)));
  if (out.pkeys) std::memcpy(out.pkeys, r.pkeys, r.pkey_count * sizeof(uint16_t));
  std::strncpy(out.link_layer, "InfiniBand", sizeof out.link_layer - 1);
}

}  // namespace

std::optional<api::NodeReply> host(const char* ca_name) {
  client::Session* s = client::Session::get();
  if (!s) return std::nullopt;
  const std::string node = s->node_of(name_or_default(ca_name));
  return node.empty() ? std::nullopt : s->query_node(node);
}

}  // namespace ibfab::umad

using namespace ibfab;


IBFAB_UMAD_EXPORT int umad_get_cas_names(char cas[][UMAD_CA_NAME_LEN], int max) {
  if (max < 1 || !umad::host()) return 0;
  std::strncpy(cas[0], umad::kCaName, UMAD_CA_NAME_LEN - 1);
  cas[0][UMAD_CA_NAME_LEN - 1] = 0;
  return 1;
}

IBFAB_UMAD_EXPORT int umad_get_ca(const char* ca_name, umad_ca_t* ca) {
  if (!ca) return -ENODEV;
  const std::optional<api::NodeReply> n = umad::host(ca_name);
  if (!n) return -ENODEV;
  std::memset(ca, 0, sizeof *ca);
  std::strncpy(ca->ca_name, umad::name_or_default(ca_name), sizeof ca->ca_name - 1);
  ca->node_type = n->node_type;
  ca->numports = static_cast<int>(n->num_ports);
  std::strncpy(ca->fw_ver, "1.0.0", sizeof ca->fw_ver - 1);
  std::strncpy(ca->ca_type, "ibfab simulated HCA", sizeof ca->ca_type - 1);
  std::strncpy(ca->hw_ver, "0", sizeof ca->hw_ver - 1);
  ca->node_guid = htobe64(n->node_guid);
  ca->system_guid = htobe64(n->system_image_guid);
  for (uint32_t i = 0; i < n->num_ports && i + 1 < UMAD_CA_MAX_PORTS; ++i) {
    auto* p = static_cast<umad_port_t*>(std::calloc(1, sizeof(umad_port_t)));
    if (!p) return -ENOMEM;
    umad::fill_port(ca_name, n->ports[i], *p);
    ca->ports[i + 1] = p;
  }
  return 0;
}

IBFAB_UMAD_EXPORT int umad_release_ca(umad_ca_t* ca) {
  if (!ca) return -ENODEV;
  for (umad_port_t*& p : ca->ports) {
    if (!p) continue;
    std::free(p->pkeys);
    std::free(p);
    p = nullptr;
  }
  return 0;
}

IBFAB_UMAD_EXPORT int umad_get_port(const char* ca_name, int portnum, umad_port_t* port) {
  if (!port) return -ENODEV;
  const std::optional<api::NodeReply> n = umad::host(ca_name);
  if (!n) return -ENODEV;
  const int chosen = portnum == 0 ? umad::best_port(*n) : portnum;
  if (chosen < 1 || static_cast<uint32_t>(chosen) > n->num_ports) return -ENODEV;
  umad::fill_port(ca_name, n->ports[chosen - 1], *port);
  return 0;
}

IBFAB_UMAD_EXPORT int umad_release_port(umad_port_t* port) {
  if (!port) return -ENODEV;
  std::free(port->pkeys);
  port->pkeys = nullptr;
  return 0;
}

IBFAB_UMAD_EXPORT int umad_get_ca_portguids(const char* ca_name, __be64* portguids, int max) {
  const std::optional<api::NodeReply> n = umad::host(ca_name);
  if (!n) return -ENODEV;
  const int count = static_cast<int>(n->num_ports) + 1;  // [0] is the node's (0 for a CA)
  if (max < count) return -ENOMEM;
  if (portguids) {
    portguids[0] = 0;
    for (uint32_t i = 0; i < n->num_ports; ++i) portguids[i + 1] = htobe64(n->ports[i].port_guid);
  }
  return count;
}

IBFAB_UMAD_EXPORT int umad_get_issm_path(const char* ca_name, int portnum, char path[], int max) {
  if (!umad::host(ca_name) || portnum < 0 || max <= 0) return -ENODEV;
  // The simulated fabric has no issm device: opensm's open() of it fails
  // and is only logged, as on a host without the device node.
  std::snprintf(path, static_cast<std::size_t>(max), "/dev/infiniband/issm-ibfab%d", portnum);
  return 0;
}

IBFAB_UMAD_EXPORT struct umad_device_node* umad_get_ca_device_list(void) {
  if (!umad::host()) return nullptr;
  auto* node = static_cast<umad_device_node*>(std::calloc(1, sizeof(umad_device_node)));
  if (!node) return nullptr;
  node->ca_name = strdup(umad::kCaName);
  return node;
}

IBFAB_UMAD_EXPORT void umad_free_ca_device_list(struct umad_device_node* head) {
  while (head) {
    umad_device_node* next = head->next;
    std::free(const_cast<char*>(head->ca_name));
    std::free(head);
    head = next;
  }
}

IBFAB_UMAD_EXPORT int umad_sort_ca_device_list(struct umad_device_node** head, size_t size) {
  (void)size;
  return head ? 0 : -EINVAL;  // one CA: sorted
}


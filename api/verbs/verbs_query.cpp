// Device, port, GID and P_Key queries, answered from the engine's model as
// the SM configured it; and the sysfs files ibv_devinfo reads.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "api/verbs/export.h"
#include "api/verbs/verbs_internal.h"

#undef ibv_query_port

namespace ibfab::verbs {
namespace {

inline constexpr int kGidTableLength = 1;  // one GID per port: the port GID

// What the device can do, as ibv_device_attr.device_cap_flags and (all 64
// bits) ibv_device_attr_ex.device_cap_flags_ex say it: P_Key and Q_Key
// violations are counted (PortInfo), port events are reported, the system
// image GUID is real, RC NAKs with RNR, a UD AH's port must be the QP's,
// XRC (domains, XRC SRQs, XRC_SEND and XRC_RECV QPs), and memory windows
// of type 1 and 2B (bound to a QP), as mlx5's.
inline constexpr uint64_t kDeviceCapFlags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
                                            IBV_DEVICE_UD_AV_PORT_ENFORCE | IBV_DEVICE_PORT_ACTIVE_EVENT |
                                            IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_XRC |
                                            IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;

// ibv_device_attr as the kernel's uverbs fills it for this HCA. Fields of
// features the library does not offer yet (raw QPs, FMRs, EE) are 0, as a
// device without them reports.
void fill_device_attr(const api::NodeReply& n, ibv_device_attr& a) {
  std::memset(&a, 0, sizeof a);
  std::snprintf(a.fw_ver, sizeof a.fw_ver, "%s", kFwVer);
  a.node_guid = htobe64(n.node_guid);
  a.sys_image_guid = htobe64(n.system_image_guid);
  a.max_mr_size = ~uint64_t{0};
  a.page_size_cap = ~uint64_t{0xFFF};  // any multiple of 4 KiB, as mlx5 reports it
  a.vendor_id = kVendorId;
  a.vendor_part_id = kVendorPartId;
  a.hw_ver = kHwVer;
  a.max_qp = 1 << 16;
  a.max_qp_wr = static_cast<int>(kMaxQpWr);
  a.device_cap_flags = static_cast<int>(static_cast<uint32_t>(kDeviceCapFlags));
  a.max_sge = static_cast<int>(kMaxSge);
  a.max_cq = 1 << 16;
  a.max_cqe = static_cast<int>(kMaxCqe);
  a.max_mr = 1 << 20;
  a.max_mw = 1 << 20;  // regions and windows share the HCA's table (fabric::MemoryTable::kMaxEntries)
  a.max_pd = 1 << 16;
  a.max_ah = 1 << 20;
  a.max_mcast_grp = static_cast<int>(kMaxMcastGroups);
  a.max_mcast_qp_attach = static_cast<int>(kMaxQpsPerMcastGroup);
  a.max_total_mcast_qp_attach = static_cast<int>(kMaxMcastGroups * kMaxQpsPerMcastGroup);
  a.max_pkeys = static_cast<uint16_t>(api::kMaxPkeys);
  a.local_ca_ack_delay = 16;
  a.phys_port_cnt = static_cast<uint8_t>(std::min<uint32_t>(n.num_ports, 255));
  a.max_sge_rd = static_cast<int>(kMaxSge);
  a.max_srq = 1 << 16;
  a.max_srq_wr = static_cast<int>(kMaxQpWr);
  a.max_srq_sge = static_cast<int>(kMaxSge);
  a.max_qp_rd_atom = static_cast<int>(kMaxRdAtomic);
  a.max_qp_init_rd_atom = static_cast<int>(kMaxRdAtomic);
  a.max_res_rd_atom = static_cast<int>(kMaxRdAtomic) << 16;
  a.atomic_cap = IBV_ATOMIC_HCA;  // atomic against each other on this HCA, not against the CPU
}

// The extension, as rdma-core 44's ibv_cmd_query_device_any and the mlx5
// provider fill it from the kernel's answer: comp_mask is never copied (0);
// ODP, timestamps, TSO, RSS, WQs, packet pacing, raw packet, tag matching,
// CQ moderation, device memory and PCI atomics are absent (0);
// device_cap_flags_ex carries every capability bit, the legacy field its
// low 32; phys_port_cnt_ex is the port count (the legacy field stops at
// 255).
void fill_device_attr_ex(const api::NodeReply& n, ibv_device_attr_ex& ex) {
  std::memset(&ex, 0, sizeof ex);
  fill_device_attr(n, ex.orig_attr);
  ex.device_cap_flags_ex = kDeviceCapFlags;
  ex.phys_port_cnt_ex = n.num_ports;
}

// The first `len` bytes of a port's ibv_port_attr (the exported compat
// call's callers have the 48-byte layout without port_cap_flags2).
int fill_port_attr(Context& c, uint8_t port_num, void* out, std::size_t len) {
  const std::optional<api::NodeReply> n = query_node(c);
  if (!n) return ENODEV;
  const api::PortRecord* p = port_of(*n, port_num);
  if (!p) return EINVAL;
  ibv_port_attr a{};
  a.state = static_cast<ibv_port_state>(p->state);
  a.max_mtu = static_cast<ibv_mtu>(p->max_mtu ? p->max_mtu : IBV_MTU_4096);
  a.active_mtu = static_cast<ibv_mtu>(p->active_mtu ? p->active_mtu : IBV_MTU_4096);
  a.gid_tbl_len = kGidTableLength;
  a.port_cap_flags = p->capability_mask;
  a.max_msg_sz = 1u << 30;
  a.pkey_tbl_len = static_cast<uint16_t>(api::kMaxPkeys);
  a.lid = p->lid;
  a.sm_lid = p->sm_lid;
  a.lmc = p->lmc;
  a.max_vl_num = 4;  // VL0-7
  a.sm_sl = p->sm_sl;
  a.subnet_timeout = 18;
  a.active_width = p->active_width;
  a.active_speed = p->active_speed;
  a.phys_state = p->phys_state;
  a.link_layer = IBV_LINK_LAYER_INFINIBAND;
  std::memcpy(out, &a, std::min(len, sizeof a));
  return 0;
}

// Port GID `index` of `port_num`; EINVAL for an index past the table.
int port_gid(Context& c, uint32_t port_num, uint32_t index, ibv_gid& gid) {
  const std::optional<api::NodeReply> n = query_node(c);
  if (!n) return ENODEV;
  const api::PortRecord* p = port_num <= 0xFF ? port_of(*n, static_cast<uint8_t>(port_num)) : nullptr;
  if (!p || index >= kGidTableLength) return EINVAL;
  gid.global.subnet_prefix = htobe64(p->gid_prefix);
  gid.global.interface_id = htobe64(p->port_guid);
  return 0;
}

void fill_gid_entry(const ibv_gid& gid, uint32_t port, uint32_t index, ibv_gid_entry& e) {
  e = ibv_gid_entry{};
  e.gid = gid;
  e.gid_index = index;
  e.port_num = port;
  e.gid_type = IBV_GID_TYPE_IB;
}

}  // namespace

int query_port_op(ibv_context* context, uint8_t port_num, ibv_port_attr* attr, size_t attr_len) {
  if (!context || !attr) return EINVAL;
  return fill_port_attr(*Context::from(context), port_num, attr, attr_len);
}

int query_device_ex_op(ibv_context* context, const ibv_query_device_ex_input* input, ibv_device_attr_ex* attr,
                       size_t attr_size) {
  if (!context || !attr || (input && input->comp_mask) || attr_size < sizeof(ibv_device_attr)) return EINVAL;
  const std::optional<api::NodeReply> n = query_node(*Context::from(context));
  if (!n) return ENODEV;
  ibv_device_attr_ex ex;
  fill_device_attr_ex(*n, ex);
  // A caller built against newer headers passes a larger struct: the rest
  // reads 0, as rdma-core clears the caller's whole size.
  std::memset(attr, 0, attr_size);
  std::memcpy(attr, &ex, std::min(attr_size, sizeof ex));
  return 0;
}

}  // namespace ibfab::verbs

using namespace ibfab;
using namespace ibfab::verbs;

IBFAB_VERBS_EXPORT int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  if (!context || !attr) return fail(EINVAL);
  const std::optional<api::NodeReply> n = query_node(*Context::from(context));
  if (!n) return fail(ENODEV);
  fill_device_attr(*n, *attr);
  return 0;
}

// The exported form: callers built against older headers pass the 48-byte
// struct _compat_ibv_port_attr, which ends before port_cap_flags2.
IBFAB_VERBS_EXPORT int ibv_query_port(ibv_context* context, uint8_t port_num, _compat_ibv_port_attr* attr) {
  if (!context || !attr) return fail(EINVAL);
  const int e = fill_port_attr(*Context::from(context), port_num, attr, offsetof(ibv_port_attr, port_cap_flags2));
  return e ? fail(e) : 0;
}

IBFAB_VERBS_EXPORT int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid) {
  if (!context || !gid || index < 0) return errno = EINVAL, -1;
  const int e = port_gid(*Context::from(context), port_num, static_cast<uint32_t>(index), *gid);
  return e ? (errno = e, -1) : 0;
}

IBFAB_VERBS_EXPORT int _ibv_query_gid_ex(ibv_context* context, uint32_t port_num, uint32_t gid_index,
                                         ibv_gid_entry* entry, uint32_t flags, size_t entry_size) {
  if (!context || !entry || flags || entry_size < sizeof(ibv_gid_entry)) return EINVAL;
  ibv_gid gid;
  if (const int e = port_gid(*Context::from(context), port_num, gid_index, gid)) return e == EINVAL ? ENODATA : e;
  fill_gid_entry(gid, port_num, gid_index, *entry);
  return 0;
}

IBFAB_VERBS_EXPORT ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries, size_t max_entries,
                                                uint32_t flags, size_t entry_size) {
  if (!context || flags || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  const std::optional<api::NodeReply> n = query_node(*Context::from(context));
  if (!n) return -ENODEV;
  std::size_t count = 0;
  for (uint32_t port = 1; port <= n->num_ports && port <= api::kMaxPorts; ++port) {
    ibv_gid gid;
    if (port_gid(*Context::from(context), port, 0, gid) != 0) continue;
    if (count == max_entries) return -EINVAL;  // the table does not fit
    fill_gid_entry(gid, port, 0, entries[count++]);
  }
  return static_cast<ssize_t>(count);
}

// rdma-core's private driver.h (not installed) declares this with an enum
// ibv_gid_type_sysfs*: 0 is "IB/RoCE v1", 1 is "RoCE v2".
IBFAB_VERBS_EXPORT int ibv_query_gid_type(ibv_context* context, uint8_t port_num, unsigned int index, int* type) {
  if (!context || !type) return errno = EINVAL, -1;
  ibv_gid gid;
  if (const int e = port_gid(*Context::from(context), port_num, index, gid)) return errno = e, -1;
  *type = 0;  // IB/RoCE v1: what an IB port's GIDs are
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_query_pkey(ibv_context* context, uint8_t port_num, int index, __be16* pkey) {
  if (!context || !pkey || index < 0 || index >= static_cast<int>(api::kMaxPkeys)) return errno = EINVAL, -1;
  const std::optional<api::NodeReply> n = query_node(*Context::from(context));
  if (!n) return errno = ENODEV, -1;
  const api::PortRecord* p = port_of(*n, port_num);
  if (!p) return errno = EINVAL, -1;
  *pkey = htobe16(index < p->pkey_count ? p->pkeys[index] : 0);
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_get_pkey_index(ibv_context* context, uint8_t port_num, __be16 pkey) {
  if (!context) return errno = EINVAL, -1;
  const std::optional<api::NodeReply> n = query_node(*Context::from(context));
  const api::PortRecord* p = n ? port_of(*n, port_num) : nullptr;
  if (!p) return errno = EINVAL, -1;
  for (int i = 0; i < p->pkey_count; ++i)
    if (p->pkeys[i] == be16toh(pkey)) return i;
  return errno = ENOENT, -1;
}

IBFAB_VERBS_EXPORT const char* ibv_get_sysfs_path(void) { return "/sys"; }

// Files under a device's ibdev_path (/sys/class/infiniband/ibfabN) are
// made up from the model; any other path is read from the file system.
IBFAB_VERBS_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  if (!dir || !file || !buf || size == 0) return errno = EINVAL, -1;
  static constexpr char kPrefix[] = "/sys/class/infiniband/ibfab";
  if (std::strncmp(dir, kPrefix, sizeof kPrefix - 1) == 0) {
    const char* value = nullptr;
    if (std::strcmp(file, "board_id") == 0) value = kBoardId;
    else if (std::strcmp(file, "fw_ver") == 0) value = kFwVer;
    else if (std::strcmp(file, "hca_type") == 0) value = "ibfab";
    else if (std::strcmp(file, "hw_rev") == 0) value = "0";  // kHwVer, as mlx5 prints it ("%x")
    else if (std::strcmp(file, "node_type") == 0) value = "1: CA";
    if (!value) return errno = ENOENT, -1;
    const int n = std::snprintf(buf, size, "%s", value);
    return std::min(n, static_cast<int>(size) - 1);
  }
  char path[512];
  std::snprintf(path, sizeof path, "%s/%s", dir, file);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = ::read(fd, buf, size);
  ::close(fd);
  if (n < 0) return -1;
  if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = '\0';
  else if (static_cast<std::size_t>(n) < size) buf[n] = '\0';
  return static_cast<int>(n);
}

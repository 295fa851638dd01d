#include "tools/passthrough/rdma_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ibfab::passthrough {
namespace {

std::string errno_text(const std::string& call) { return call + ": " + std::strerror(errno); }

// Waits are poll()s on the fds; a read finds nothing rather than blocking.
bool set_nonblocking(int fd) { return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0; }

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// The machine's addresses of `family` rdma_cm may bind to: neither
// loopback nor link-local (which would need a scope).
std::vector<sockaddr_storage> candidate_addresses(Family family) {
  std::vector<sockaddr_storage> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    sockaddr_storage a{};
    if (family == Family::Ipv6 && i->ifa_addr->sa_family == AF_INET6) {
      const auto& s = *reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&s.sin6_addr) || IN6_IS_ADDR_LOOPBACK(&s.sin6_addr)) continue;
      std::memcpy(&a, &s, sizeof s);
      out.push_back(a);
    } else if (family == Family::Ipv4 && i->ifa_addr->sa_family == AF_INET) {
      const auto& s = *reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      if (ntohl(s.sin_addr.s_addr) >> 24 == 127) continue;
      std::memcpy(&a, &s, sizeof s);
      out.push_back(a);
    }
  }
  freeifaddrs(list);
  return out;
}

// The GID of the address `id` is bound to: the one rdma_cm gives, or
// else (a library that leaves it out) the port's GID on InfiniBand and the
// IPv4-mapped or IPv6 address on RoCE.
ibv_gid own_gid(const rdma_cm_id& id, bool infiniband) {
  ibv_gid g = id.route.addr.addr.ibaddr.sgid;
  static constexpr ibv_gid kZero{};
  if (std::memcmp(&g, &kZero, sizeof g) != 0) return g;
  if (infiniband) {
    ibv_query_gid(id.verbs, id.port_num, 0, &g);
    return g;
  }
  const sockaddr* a = &id.route.addr.src_addr;
  if (a->sa_family == AF_INET6) {
    std::memcpy(g.raw, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, 16);
  } else {
    g = kZero;
    g.raw[10] = g.raw[11] = 0xff;
    std::memcpy(g.raw + 12, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, 4);
  }
  return g;
}

}  // namespace

uint32_t get_be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

void fill_message(uint8_t* p, uint32_t size, uint32_t seq, uint32_t step) {
  uint8_t header[8];
  put_be32(header, seq);
  put_be32(header + 4, step);
  for (uint32_t i = 0; i < size; ++i) p[i] = i < 8 ? header[i] : pattern_byte(seq, i - 8);
}

const char* wc_opcode_name(ibv_wc_opcode op) {
  switch (op) {
    case IBV_WC_SEND: return "IBV_WC_SEND";
    case IBV_WC_RDMA_WRITE: return "IBV_WC_RDMA_WRITE";
    case IBV_WC_RDMA_READ: return "IBV_WC_RDMA_READ";
    case IBV_WC_RECV: return "IBV_WC_RECV";
    case IBV_WC_RECV_RDMA_WITH_IMM: return "IBV_WC_RECV_RDMA_WITH_IMM";
    default: return "other";
  }
}

void check_device_port(const DevicePort& dp) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_device* found = nullptr;
  std::string names;
  for (int i = 0; list && i < n; ++i) {
    names += (names.empty() ? "" : ", ") + std::string(ibv_get_device_name(list[i]));
    if (dp.device == ibv_get_device_name(list[i])) found = list[i];
  }
  std::string problem;
  if (!found) {
    problem = "device '" + dp.device + "' does not exist (ibv_get_device_list: " + (names.empty() ? "none" : names) + ")";
  } else if (ibv_context* ctx = ibv_open_device(found); !ctx) {
    problem = "device '" + dp.device + "': " + errno_text("ibv_open_device");
  } else {
    ibv_device_attr dev{};
    ibv_port_attr port{};
    if (ibv_query_device(ctx, &dev) != 0) {
      problem = "device '" + dp.device + "': " + errno_text("ibv_query_device");
    } else if (dp.port > dev.phys_port_cnt || ibv_query_port(ctx, dp.port, &port) != 0) {
      problem = "device '" + dp.device + "' has no port " + std::to_string(dp.port) + " (it has " +
                std::to_string(dev.phys_port_cnt) + ")";
    } else if (port.state != IBV_PORT_ACTIVE) {
      problem = "device '" + dp.device + "' port " + std::to_string(dp.port) + " is not active (its state: " +
                ibv_port_state_str(port.state) + ")";
    }
    ibv_close_device(ctx);
  }
  if (list) ibv_free_device_list(list);
  if (!problem.empty()) throw SetupError(problem);
}

void RdmaHost::bind_to_port(const DevicePort& dp, Family family) {
  std::vector<sockaddr_storage> candidates = candidate_addresses(family);
  if (!dp.address.empty()) {
    sockaddr_storage given{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&given);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&given);
    if (family == Family::Ipv4 && ::inet_pton(AF_INET, dp.address.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
    } else if (family == Family::Ipv6 && ::inet_pton(AF_INET6, dp.address.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
    } else {
      throw SetupError("address " + dp.address + " is not " + to_string(family) + " (--family)");
    }
    candidates = {given};
  }
  for (sockaddr_storage& a : candidates) {
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(channel_, &id, this, RDMA_PS_UDP) != 0)
      throw SetupError("device '" + dp.device + "': " + errno_text("rdma_create_id"));
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&a)) == 0 && id->verbs &&
        dp.device == ibv_get_device_name(id->verbs->device) && id->port_num == dp.port) {
      id_ = id;
      return;
    }
    rdma_destroy_id(id);
  }
  if (!dp.address.empty())
    throw SetupError("device '" + dp.device + "' port " + std::to_string(dp.port) + ": rdma_bind_addr to " +
                     dp.address + " does not put rdma_cm on it");
  throw SetupError("device '" + dp.device + "' port " + std::to_string(dp.port) + ": no " + to_string(family) +
                   " address of the machine binds rdma_cm to it (rdma_bind_addr): it has no such interface address");
}

RdmaHost::RdmaHost(std::string name, const DevicePort& dp, Family family, uint32_t recv_depth, uint32_t max_size,
                   uint32_t recv_sets)
    : name_(std::move(name)), slot_size_(kGrhBytes + max_size), recv_depth_(recv_depth),
      recv_slots_(recv_depth * std::max(recv_sets, 1u)) {
  const std::string where = "device '" + dp.device + "': ";
  channel_ = rdma_create_event_channel();
  if (!channel_ || !set_nonblocking(channel_->fd)) throw SetupError(where + errno_text("rdma_create_event_channel"));
  bind_to_port(dp, family);
  pd_ = ibv_alloc_pd(id_->verbs);
  if (!pd_) throw SetupError(where + errno_text("ibv_alloc_pd"));
  comp_ = ibv_create_comp_channel(id_->verbs);
  if (!comp_ || !set_nonblocking(comp_->fd)) throw SetupError(where + errno_text("ibv_create_comp_channel"));
  send_cq_ = ibv_create_cq(id_->verbs, static_cast<int>(kSendSlots), this, comp_, 0);
  recv_cq_ = ibv_create_cq(id_->verbs, static_cast<int>(recv_depth), this, comp_, 0);
  if (!send_cq_ || !recv_cq_) throw SetupError(where + errno_text("ibv_create_cq"));
  ibv_port_attr port{};
  if (ibv_query_port(id_->verbs, id_->port_num, &port) != 0) throw SetupError(where + errno_text("ibv_query_port"));
  infiniband_ = port.link_layer != IBV_LINK_LAYER_ETHERNET;
  gid_ = own_gid(*id_, infiniband_);
  buffers_.resize(std::size_t{slot_size_} * (recv_slots_ + kSendSlots));
  slot_qp_.assign(recv_slots_, 0);
  const int access = IBV_ACCESS_LOCAL_WRITE;  // an int: verbs.h's macro masks it with another enum
  mr_ = ibv_reg_mr(pd_, buffers_.data(), buffers_.size(), access);
  if (!mr_) throw SetupError(where + errno_text("ibv_reg_mr"));
  if (const int err = create_ud_qp(0)) throw SetupError(where + "rdma_create_qp_ex: " + std::strerror(err));
  post_receives();
  if (current_posted_ != recv_depth) throw SetupError(where + errno_text("ibv_post_recv"));
}

int RdmaHost::create_ud_qp(uint32_t create_flags) {
  ibv_qp_init_attr_ex attr{};
  attr.qp_type = IBV_QPT_UD;
  attr.send_cq = send_cq_;
  attr.recv_cq = recv_cq_;
  attr.cap.max_send_wr = kSendSlots;
  attr.cap.max_recv_wr = recv_depth_;
  attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
  attr.comp_mask = IBV_QP_INIT_ATTR_PD;
  attr.pd = pd_;
  if (create_flags) {
    attr.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
    attr.create_flags = create_flags;
  }
  return rdma_create_qp_ex(id_, &attr) == 0 ? 0 : errno;
}

int RdmaHost::destroy_qp() {
  if (!id_->qp) return 0;
  const uint32_t qpn = id_->qp->qp_num;
  const int rc = ibv_destroy_qp(id_->qp);
  id_->qp = nullptr;
  // A destroyed QP's receives are gone uncompleted: its slots are free. A
  // refused one keeps its slots until it completes them (drain()).
  if (rc == 0) std::replace(slot_qp_.begin(), slot_qp_.end(), qpn, 0u);
  current_posted_ = 0;
  return rc;
}

int RdmaHost::make_qp(uint32_t create_flags) {
  if (const int err = create_ud_qp(create_flags)) return err;
  post_receives();
  return 0;
}

int RdmaHost::modify_state(ibv_qp_state to) {
  if (!id_->qp) return EINVAL;
  ibv_qp_attr now{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(id_->qp, &now, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, &init) != 0)
    return errno;
  ibv_qp_attr attr{};
  attr.qp_state = to;
  int mask = IBV_QP_STATE;
  if (to == IBV_QPS_INIT) {
    attr.pkey_index = now.pkey_index;
    attr.port_num = now.port_num ? now.port_num : id_->port_num;
    attr.qkey = now.qkey;
    mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  } else if (to == IBV_QPS_RTS && now.qp_state == IBV_QPS_RTR) {
    attr.sq_psn = 0;
    mask |= IBV_QP_SQ_PSN;
  }
  if (const int rc = ibv_modify_qp(id_->qp, &attr, mask)) return rc;
  if (to == IBV_QPS_RESET) {
    std::replace(slot_qp_.begin(), slot_qp_.end(), id_->qp->qp_num, 0u);
    current_posted_ = 0;
  }
  if (to == IBV_QPS_INIT || to == IBV_QPS_RTR || to == IBV_QPS_RTS) post_receives();
  return 0;
}

RdmaHost::Address RdmaHost::address() const {
  Address a{0, gid_, qp_num(), 0};
  ibv_port_attr port{};
  if (ibv_query_port(id_->verbs, id_->port_num, &port) == 0) a.lid = port.lid;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (id_->qp && ibv_query_qp(id_->qp, &attr, IBV_QP_QKEY, &init) == 0) a.qkey = attr.qkey;
  return a;
}

int RdmaHost::sgid_index() const {
  ibv_port_attr port{};
  if (ibv_query_port(id_->verbs, id_->port_num, &port) != 0) return -1;
  for (int i = 0; i < port.gid_tbl_len; ++i) {
    ibv_gid g{};
    if (ibv_query_gid(id_->verbs, id_->port_num, i, &g) == 0 && std::memcmp(&g, &gid_, sizeof g) == 0) return i;
  }
  return -1;
}

RdmaHost::~RdmaHost() {
  if (id_) destroy_qp();
  if (id_) rdma_destroy_id(id_);
  if (mr_) ibv_dereg_mr(mr_);
  if (send_cq_) ibv_destroy_cq(send_cq_);
  if (recv_cq_) ibv_destroy_cq(recv_cq_);
  if (comp_) ibv_destroy_comp_channel(comp_);
  if (pd_) ibv_dealloc_pd(pd_);
  if (channel_) rdma_destroy_event_channel(channel_);
}

void RdmaHost::post_receives() {
  for (uint32_t s = 0; s < recv_slots_ && current_posted_ < recv_depth_; ++s)
    if (!slot_qp_[s] && !post_receive(s)) return;
}

bool RdmaHost::post_receive(uint32_t slot) {
  if (slot_qp_[slot]) return true;
  if (!id_->qp || current_posted_ >= recv_depth_) return false;
  ibv_sge sge{reinterpret_cast<uintptr_t>(&buffers_[std::size_t{slot} * slot_size_]), slot_size_, mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(id_->qp, &wr, &bad) != 0) return false;
  slot_qp_[slot] = id_->qp->qp_num;
  ++current_posted_;
  return true;
}

int RdmaHost::post_send(ibv_ah* ah, uint32_t qpn, uint32_t qkey, uint32_t seq, uint32_t step, uint32_t size) {
  uint8_t* p = &buffers_[std::size_t{recv_slots_ + seq % kSendSlots} * slot_size_];
  fill_message(p, size, seq, step);
  ibv_sge sge{reinterpret_cast<uintptr_t>(p), size, mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = seq;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = qpn;
  wr.wr.ud.remote_qkey = qkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(id_->qp, &wr, &bad);
}

void RdmaHost::drain() {
  ibv_wc wc[16];
  for (int n; (n = ibv_poll_cq(send_cq_, 16, wc)) > 0;)
    for (int i = 0; i < n; ++i) sent.push_back({wc[i].status, wc[i].opcode});
  for (int n; (n = ibv_poll_cq(recv_cq_, 16, wc)) > 0;) {
    for (int i = 0; i < n; ++i) {
      const ibv_wc& w = wc[i];
      Received r{w.status, w.opcode, w.byte_len, (w.wc_flags & IBV_WC_GRH) != 0, std::nullopt, w.src_qp,
                 std::nullopt, std::nullopt, true};
      if (w.wc_flags & IBV_WC_WITH_IMM) r.imm = ntohl(w.imm_data);
      const uint32_t slot = static_cast<uint32_t>(w.wr_id);
      if (w.status == IBV_WC_SUCCESS && w.byte_len >= kGrhBytes) {
        const uint8_t* p = &buffers_[std::size_t{slot} * slot_size_ + kGrhBytes];
        const uint32_t len = std::min(w.byte_len, slot_size_) - kGrhBytes;
        if (len >= 4) r.seq = get_be32(p);
        if (len >= 8) r.step = get_be32(p + 4);
        for (uint32_t b = 8; b < len; ++b) r.intact = r.intact && p[b] == pattern_byte(*r.seq, b - 8);
      }
      received.push_back(r);
      delivered += w.status == IBV_WC_SUCCESS;
      // A flushed or failed receive is not posted again: the QP is in
      // ERR (or RESET next), where it would only be flushed again. A slot
      // a QP let go of (its destroy refused) completes goes to the current
      // QP.
      if (slot < recv_slots_ && slot_qp_[slot]) {
        const bool mine = slot_qp_[slot] == qp_num();
        slot_qp_[slot] = 0;
        if (mine) --current_posted_;
        if (w.status == IBV_WC_SUCCESS || !mine) post_receive(slot);
      }
    }
  }
  // The channel's fd is non-blocking: take the events there are.
  for (rdma_cm_event* e; rdma_get_cm_event(channel_, &e) == 0;) {
    CmEvent c{e->event, e->status, e->param.ud.private_data, e->param.ud.ah_attr, e->param.ud.qp_num,
              e->param.ud.qkey};
    if (e->event != RDMA_CM_EVENT_MULTICAST_JOIN && e->event != RDMA_CM_EVENT_MULTICAST_ERROR) c.context = nullptr;
    events.push_back(c);
    rdma_ack_cm_event(e);
  }
}

void RdmaHost::arm() {
  ibv_req_notify_cq(send_cq_, 0);
  ibv_req_notify_cq(recv_cq_, 0);
}

void RdmaHost::take_completion_events() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(comp_, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
}

}  // namespace ibfab::passthrough

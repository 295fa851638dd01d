#include "tools/passthrough/rc_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "tools/passthrough/completion_tally.h"

namespace ibfab::passthrough {
namespace {

using Clock = std::chrono::steady_clock;
using Op = scenario::ConnSpec::Op;

// wr_id of a receive: its slot, tagged (a send's wr_id is its sequence number).
constexpr uint64_t kRecvTag = uint64_t{1} << 63;
// The header and pattern the targets hold before anything is written: a
// read of them reads something no message holds.
constexpr uint32_t kTargetSeq = 0xFFFFFF00, kTargetStep = 0xFFFFFFFF;
constexpr int kResolveMs = 2000;

// The connection parameters each side offers (rdma_connect, rdma_accept):
// reads in flight both ways, retries without end for RNR and 7 for the
// transport (IBTA's most).
rdma_conn_param conn_param() {
  rdma_conn_param p{};
  p.responder_resources = 4;
  p.initiator_depth = 4;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  return p;
}

sockaddr_storage with_port(const sockaddr* a, uint16_t port_be) {
  sockaddr_storage s{};
  if (a->sa_family == AF_INET6) {
    std::memcpy(&s, a, sizeof(sockaddr_in6));
    reinterpret_cast<sockaddr_in6*>(&s)->sin6_port = port_be;
  } else {
    std::memcpy(&s, a, sizeof(sockaddr_in));
    reinterpret_cast<sockaddr_in*>(&s)->sin_port = port_be;
  }
  return s;
}

bool reads_memory(Op op) { return op == Op::Read; }
bool writes_memory(Op op) { return op == Op::Write || op == Op::WriteImm; }
// Whether the op consumes a receive at the peer.
bool consumes_receive(Op op) { return op == Op::Send || op == Op::SendImm || op == Op::WriteImm; }

ibv_wr_opcode wr_opcode(Op op) {
  switch (op) {
    case Op::Send: return IBV_WR_SEND;
    case Op::SendImm: return IBV_WR_SEND_WITH_IMM;
    case Op::Write: return IBV_WR_RDMA_WRITE;
    case Op::WriteImm: return IBV_WR_RDMA_WRITE_WITH_IMM;
    case Op::Read: return IBV_WR_RDMA_READ;
  }
  return IBV_WR_SEND;
}

}  // namespace

RcConnection::RcConnection(const RdmaHost& active, const RdmaHost& passive, uint32_t size,
                           std::chrono::milliseconds timeout)
    : slot_size_(std::max<uint32_t>(size, 8)), timeout_(timeout) {
  ends_[0].host = &active;
  ends_[1].host = &passive;
}

RcConnection::~RcConnection() {
  for (End& e : ends_) {
    if (e.id && e.id->qp) rdma_destroy_qp(e.id);
    if (e.id) rdma_destroy_id(e.id);
    if (e.mr) ibv_dereg_mr(e.mr);
    if (e.cq) ibv_destroy_cq(e.cq);
    if (e.comp) ibv_destroy_comp_channel(e.comp);
    if (e.pd) ibv_dealloc_pd(e.pd);
  }
  if (listener_) rdma_destroy_id(listener_);
  if (channel_) rdma_destroy_event_channel(channel_);
}

int RcConnection::make_end(End& e, std::string& failed) {
  const auto fail = [&](const char* call) {
    failed = call;
    return errno ? errno : EINVAL;
  };
  e.pd = ibv_alloc_pd(e.id->verbs);
  if (!e.pd) return fail("ibv_alloc_pd");
  e.comp = ibv_create_comp_channel(e.id->verbs);
  if (!e.comp || fcntl(e.comp->fd, F_SETFL, fcntl(e.comp->fd, F_GETFL) | O_NONBLOCK) != 0)
    return fail("ibv_create_comp_channel");
  e.cq = ibv_create_cq(e.id->verbs, static_cast<int>(2 * (kRecvDepth + kWindow)), this, e.comp, 0);
  if (!e.cq) return fail("ibv_create_cq");
  e.memory.assign(std::size_t{slot_size_} * (kRecvDepth + 2 * kWindow), 0);
  for (uint32_t t = 0; t < kWindow; ++t) fill_message(slot(e, kTargetArea + t), slot_size_, kTargetSeq + t, kTargetStep);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  e.mr = ibv_reg_mr(e.pd, e.memory.data(), e.memory.size(), access);
  if (!e.mr) return fail("ibv_reg_mr");
  ibv_qp_init_attr attr{};
  attr.qp_type = IBV_QPT_RC;
  attr.send_cq = attr.recv_cq = e.cq;
  attr.cap.max_send_wr = kWindow;
  attr.cap.max_recv_wr = kRecvDepth;
  attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(e.id, e.pd, &attr) != 0) return fail("rdma_create_qp");
  for (uint32_t r = 0; r < kRecvDepth; ++r)
    if (!post_receive(e, r)) return fail("ibv_post_recv");
  return 0;
}

bool RcConnection::post_receive(End& e, uint32_t index) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(slot(e, kRecvArea + index)), slot_size_, e.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = kRecvTag | index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(e.id->qp, &wr, &bad) != 0) return false;
  ++e.receives_posted;
  return true;
}

void RcConnection::drain() {
  ibv_wc wc[16];
  for (End& e : ends_) {
    if (!e.cq) continue;
    for (int n; (n = ibv_poll_cq(e.cq, 16, wc)) > 0;) {
      for (int i = 0; i < n; ++i) {
        const ibv_wc& w = wc[i];
        Completion c{w.status, w.opcode, w.byte_len, (w.wc_flags & IBV_WC_WITH_IMM) != 0, ntohl(w.imm_data), w.wr_id};
        if (!(w.wr_id & kRecvTag)) {
          e.sends.push_back(c);
          continue;
        }
        --e.receives_posted;
        // What a receive holds is read now, before the slot takes the next message.
        const auto index = static_cast<uint32_t>(w.wr_id & ~kRecvTag);
        if (w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_RECV) {
          const uint8_t* p = slot(e, kRecvArea + index);
          const uint32_t len = std::min(w.byte_len, slot_size_);
          if (len >= 4) c.seq = get_be32(p);
          if (len >= 8) c.step = get_be32(p + 4);
          for (uint32_t b = 8; b < len; ++b) c.intact = c.intact && p[b] == pattern_byte(*c.seq, b - 8);
        }
        e.recvs.push_back(c);
        if (w.status == IBV_WC_SUCCESS) post_receive(e, index);
      }
    }
  }
  for (rdma_cm_event* ev; channel_ && rdma_get_cm_event(channel_, &ev) == 0;) {
    End* e = nullptr;
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->listen_id == listener_ && !ends_[1].id) {
      ends_[1].id = ev->id;
      request_ = ev->param.conn;
      request_.private_data = nullptr;
      e = &ends_[1];
    } else if (ev->id == ends_[0].id || ev->id == ends_[1].id) {
      e = ev->id == ends_[0].id ? &ends_[0] : &ends_[1];
    }
    if (e && ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT) e->events.emplace_back(ev->event, ev->status);
    const bool disconnected = e && ev->event == RDMA_CM_EVENT_DISCONNECTED;
    rdma_ack_cm_event(ev);
    if (disconnected) {
      e->disconnected = true;
      // The peer's application disconnects on hearing it.
      if (e != &ends_[disconnecting_]) peer_disconnect_ = rdma_disconnect(e->id) == 0 ? 0 : errno;
    }
  }
}

template <class Done>
bool RcConnection::wait_until(Done done, std::chrono::milliseconds limit) {
  const Clock::time_point deadline = Clock::now() + (limit.count() ? limit : timeout_);
  std::vector<pollfd> fds;
  for (;;) {
    drain();
    if (done()) return true;
    for (End& e : ends_)
      if (e.cq) ibv_req_notify_cq(e.cq, 0);
    drain();
    if (done()) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    fds.clear();
    fds.push_back({channel_->fd, POLLIN, 0});
    for (End& e : ends_)
      if (e.comp) fds.push_back({e.comp->fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) > 0)
      for (End& e : ends_) {
        ibv_cq* cq = nullptr;
        void* ctx = nullptr;
        while (e.comp && ibv_get_cq_event(e.comp, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
      }
  }
}

const char* RcConnection::qp_state_name(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET: return "IBV_QPS_RESET";
    case IBV_QPS_INIT: return "IBV_QPS_INIT";
    case IBV_QPS_RTR: return "IBV_QPS_RTR";
    case IBV_QPS_RTS: return "IBV_QPS_RTS";
    case IBV_QPS_SQD: return "IBV_QPS_SQD";
    case IBV_QPS_SQE: return "IBV_QPS_SQE";
    case IBV_QPS_ERR: return "IBV_QPS_ERR";
    default: return "other";
  }
}

std::string RcConnection::qp_state(const End& e) {
  if (!e.id || !e.id->qp) return "none";
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(e.id->qp, &attr, IBV_QP_STATE, &init) != 0) return "unknown";
  return qp_state_name(attr.qp_state);
}

JsonObject RcConnection::qp_attributes(const End& e, bool connected) {
  JsonObject out;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  const int mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                   IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC;
  if (!e.id || !e.id->qp || ibv_query_qp(e.id->qp, &attr, mask, &init) != 0) return out.add("query", "failed");
  out.add("state", qp_state_name(attr.qp_state));
  if (!connected) return out;  // the rest is set on the way to RTR and RTS, and undefined before
  return out
      .add("remote_write", (attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) != 0)
      .add("remote_read", (attr.qp_access_flags & IBV_ACCESS_REMOTE_READ) != 0)
      .add("max_rd_atomic", attr.max_rd_atomic)
      .add("max_dest_rd_atomic", attr.max_dest_rd_atomic)
      .add("retry_cnt", attr.retry_cnt)
      .add("rnr_retry", attr.rnr_retry)
      .add("min_rnr_timer", attr.min_rnr_timer)
      .add("path_mtu", 128 << attr.path_mtu)
      .add("timeout", attr.timeout);
}

JsonObject RcConnection::events_heard(std::size_t from_active, std::size_t from_passive) const {
  JsonObject out;
  for (int i = 0; i < 2; ++i) {
    std::string list = "[";
    for (std::size_t k = i ? from_passive : from_active; k < ends_[i].events.size(); ++k) {
      const auto& [type, status] = ends_[i].events[k];
      list += (list.size() > 1 ? "," : "") + JsonObject().add("type", rdma_event_str(type)).add("status", status).str();
    }
    out.add_json(i ? "passive" : "active", list + "]");
  }
  return out;
}

JsonObject RcConnection::connect(bool& ok, bool listen) {
  JsonObject out;
  ok = false;
  End& a = ends_[0];
  End& p = ends_[1];
  const auto call = [&](const char* name, int rc) {
    out.add(name, call_outcome(rc, errno));
    return rc == 0;
  };
  channel_ = rdma_create_event_channel();
  if (!call("rdma_create_event_channel", channel_ ? 0 : -1) ||
      fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK) != 0)
    return out;
  // The listener: the passive host's address, a port of its own.
  sockaddr_storage local = with_port(&p.host->id()->route.addr.src_addr, 0);
  if (!call("listen", rdma_create_id(channel_, &listener_, this, RDMA_PS_TCP) == 0 &&
                              rdma_bind_addr(listener_, reinterpret_cast<sockaddr*>(&local)) == 0 &&
                              rdma_listen(listener_, 4) == 0
                          ? 0
                          : -1))
    return out;
  sockaddr_storage dst = with_port(&p.host->id()->route.addr.src_addr, rdma_get_src_port(listener_));
  if (!listen) {  // a port nobody listens on now
    rdma_destroy_id(listener_);
    listener_ = nullptr;
  }
  sockaddr_storage src = with_port(&a.host->id()->route.addr.src_addr, 0);
  if (!call("rdma_create_id", rdma_create_id(channel_, &a.id, this, RDMA_PS_TCP))) return out;
  const auto step = [&](const char* name, int rc, rdma_cm_event_type want) {
    if (!call(name, rc)) return false;
    const std::size_t heard = a.events.size();
    return wait_until([&] { return a.events.size() > heard; }) && a.events.back().first == want;
  };
  const bool resolved =
      step("rdma_resolve_addr",
           rdma_resolve_addr(a.id, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), kResolveMs),
           RDMA_CM_EVENT_ADDR_RESOLVED) &&
      step("rdma_resolve_route", rdma_resolve_route(a.id, kResolveMs), RDMA_CM_EVENT_ROUTE_RESOLVED);
  std::string failed;
  int err = 0;
  if (resolved) {
    err = make_end(a, failed);
    out.add("active_qp", JsonObject().add("rc", err ? -1 : 0).add("errno", err).add("call", failed));
  }
  rdma_conn_param param = conn_param();
  if (resolved && err == 0 && call("rdma_connect", rdma_connect(a.id, &param))) {
    // The request at the passive end, or an event that ends the attempt at the active one.
    const auto answered = [&] {
      return p.id != nullptr || (!a.events.empty() && a.events.back().first != RDMA_CM_EVENT_ROUTE_RESOLVED);
    };
    if (!listen) {
      const auto rejected = [&] {
        return std::any_of(a.events.begin(), a.events.end(),
                           [](const auto& ev) { return ev.first == RDMA_CM_EVENT_REJECTED; });
      };
      ok = wait_until(rejected) && !p.id;
    } else if (wait_until(answered) && p.id) {
      out.add("request", JsonObject()
                             .add("responder_resources", request_.responder_resources)
                             .add("initiator_depth", request_.initiator_depth)
                             .add("retry_count", request_.retry_count)
                             .add("rnr_retry_count", request_.rnr_retry_count));
      err = make_end(p, failed);
      out.add("passive_qp", JsonObject().add("rc", err ? -1 : 0).add("errno", err).add("call", failed));
      rdma_conn_param accept = conn_param();
      accept.responder_resources = std::min(accept.responder_resources, request_.initiator_depth);
      accept.initiator_depth = std::min(accept.initiator_depth, request_.responder_resources);
      if (err == 0 && call("rdma_accept", rdma_accept(p.id, &accept))) {
        const auto established = [](const End& e) {
          return std::any_of(e.events.begin(), e.events.end(),
                             [](const auto& ev) { return ev.first == RDMA_CM_EVENT_ESTABLISHED; });
        };
        connected_ = wait_until([&] { return established(a) && established(p); });
      }
    }
  }
  // Let a late event of either end (a REJECTED, an ESTABLISHED after an
  // error) come before the lists are written.
  wait_until([] { return false; }, kQuiet);
  if (listen) ok = connected_;
  out.add("events", events_heard(0, 0));
  out.add("qp", JsonObject().add("active", qp_attributes(a, connected_)).add("passive", qp_attributes(p, connected_)));
  return out;
}

JsonObject RcConnection::post(const std::string& from, const scenario::ConnSpec& spec, uint32_t step, bool& ok) {
  JsonObject out;
  End& s = end_of(from);
  End& r = peer_of(s);
  ok = false;
  if (!s.id || !s.id->qp) return out.add("error", "the host's end has no QP");
  const std::size_t sends0 = s.sends.size(), recvs0 = r.recvs.size();
  const uint32_t size = std::min(spec.size, slot_size_);
  bool intact = true;
  std::size_t checked = sends0;  // send completions whose data was checked
  // A write's data is in the peer's target slot, a read's in the source
  // slot, once the completion came: checked before the slot is used again.
  const auto check_data = [&] {
    for (; checked < s.sends.size(); ++checked) {
      const Completion& c = s.sends[checked];
      if (c.status != IBV_WC_SUCCESS || !(reads_memory(spec.op) || writes_memory(spec.op))) continue;
      const auto t = static_cast<uint32_t>(c.wr_id % kWindow);
      intact = intact && std::memcmp(slot(s, kSourceArea + t), slot(r, kTargetArea + t), size) == 0;
    }
  };
  const Clock::time_point start = Clock::now();
  uint32_t posted = 0;
  int rc = 0;
  bool timed_out = false;
  for (uint32_t seq = 0; seq < spec.count && rc == 0; ++seq) {
    // The slot of message seq - kWindow is free once its completion came.
    if (seq >= kWindow) timed_out = !wait_until([&] { return s.sends.size() - sends0 > seq - kWindow; });
    if (timed_out) break;
    check_data();
    uint8_t* src = slot(s, kSourceArea + seq % kWindow);
    if (reads_memory(spec.op)) std::memset(src, 0, size);
    else fill_message(src, size, seq, step);
    ibv_sge sge{reinterpret_cast<uintptr_t>(src), size, s.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = seq;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = wr_opcode(spec.op);
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(spec.imm + seq);
    wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(slot(r, kTargetArea + seq % kWindow));
    wr.wr.rdma.rkey = r.mr ? r.mr->rkey : 0;
    ibv_send_wr* bad = nullptr;
    rc = ibv_post_send(s.id->qp, &wr, &bad);
    if (rc == 0) ++posted;
  }
  const auto successes = [&] {
    return static_cast<std::size_t>(std::count_if(s.sends.begin() + static_cast<std::ptrdiff_t>(sends0), s.sends.end(),
                                                  [](const Completion& c) { return c.status == IBV_WC_SUCCESS; }));
  };
  // Every send completion, then (the requester's completion may be polled
  // first) a receive for each one that succeeded and consumes one.
  if (!timed_out)
    timed_out = !wait_until([&] {
      return s.sends.size() - sends0 >= posted &&
             (!consumes_receive(spec.op) || r.recvs.size() - recvs0 >= successes());
    });
  check_data();
  // The receives in order: the k-th carries message k (a send) and
  // immediate data imm + k.
  bool in_order = true;
  for (std::size_t k = 0; recvs0 + k < r.recvs.size(); ++k) {
    const Completion& c = r.recvs[recvs0 + k];
    if (c.status != IBV_WC_SUCCESS) continue;
    const bool imm_wanted = spec.op == Op::SendImm || spec.op == Op::WriteImm;
    in_order = in_order && c.with_imm == imm_wanted && (!imm_wanted || c.imm == spec.imm + k) &&
               (!c.seq || *c.seq == k) && (!c.step || *c.step == step);
    intact = intact && c.intact && c.byte_len == spec.size;
  }
  const bool want_success = connected_;
  const bool all_as_wanted =
      std::all_of(s.sends.begin() + static_cast<std::ptrdiff_t>(sends0), s.sends.end(), [&](const Completion& c) {
        return want_success ? c.status == IBV_WC_SUCCESS : c.status == IBV_WC_WR_FLUSH_ERR;
      });
  out.add("connected", connected_)
      .add("posted", posted)
      .add("post", call_outcome(rc, rc))  // verbs returns the errno value itself
      .add_json("completions", completion_tally(s.sends, sends0, spec.op == Op::Read))
      .add_json("peer_completions", completion_tally(r.recvs, recvs0, true))
      .add("in_order", in_order)
      .add("intact", intact)
      .add("timed_out", timed_out);
  ok = posted == spec.count && !timed_out && all_as_wanted && s.sends.size() - sends0 == posted && in_order && intact;
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  return out.add("raw", JsonObject().add("elapsed_us", static_cast<int64_t>(elapsed.count())));
}

JsonObject RcConnection::disconnect(const std::string& from, bool& ok) {
  JsonObject out;
  End& s = end_of(from);
  End& r = peer_of(s);
  ok = false;
  if (!s.id) return out.add("error", "the host's end has no id");
  const std::size_t heard_a = ends_[0].events.size(), heard_p = ends_[1].events.size();
  const std::size_t recvs_s = s.recvs.size(), recvs_r = r.recvs.size();
  const uint32_t posted_s = s.receives_posted, posted_r = r.receives_posted;
  disconnecting_ = &s == &ends_[0] ? 0 : 1;
  const int rc = rdma_disconnect(s.id);
  out.add("call", call_outcome(rc, errno));
  // Both ends hear DISCONNECTED; the receives each QP held are flushed.
  const bool heard = wait_until([&] { return s.disconnected && r.disconnected; });
  wait_until([&] { return s.recvs.size() - recvs_s >= posted_s && r.recvs.size() - recvs_r >= posted_r; });
  wait_until([] { return false; }, kQuiet);
  connected_ = false;
  if (peer_disconnect_) out.add("peer_call", call_outcome(*peer_disconnect_ ? -1 : 0, *peer_disconnect_));
  else out.add_null("peer_call");
  out.add("events", events_heard(heard_a, heard_p));
  out.add("flushed_receives", JsonObject()
                                  .add_json("self", completion_tally(s.recvs, recvs_s, false))
                                  .add_json("peer", completion_tally(r.recvs, recvs_r, false)));
  out.add("qp_state", JsonObject().add("self", qp_state(s)).add("peer", qp_state(r)));
  ok = rc == 0 && heard;
  return out;
}

}  // namespace ibfab::passthrough

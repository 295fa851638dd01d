#include "tools/scenario/scenario_connection.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "api/server/kernel/ib_cm_connection.h"
#include "fabric/model/fabric.h"
#include "sim/rng.h"
#include "sm/sa/sa_agent.h"
#include "tools/scenario/scenario_host.h"

namespace ibfab::scenario {
namespace {

using fabric::QpAttr;
using fabric::QpState;
namespace qp_mask = fabric::qp_mask;

// What a buffer waiting for data holds. No message's first byte is it
// (the top byte of a sequence number below 2^24), nor the first byte a
// read reads (read_byte at a multiple of kReadStride).
constexpr uint8_t kPoison = 0x3C;
constexpr uint64_t kReadStride = 8;           // read n starts (n % kDepth) * 8 bytes into the read area
constexpr uint64_t kMemoryBase = 1ull << 44;  // each connection end's memory: 2^32 bytes of addresses of its own
constexpr uint64_t kRingBytes = 4u << 20;     // what a ring of buffers takes, unless that leaves fewer than
constexpr uint32_t kMinSlots = 4;             // this many buffers

// How many buffers of `size` bytes a ring holds: kDepth, fewer for large
// messages (a 1 MiB message has 4).
uint32_t slots_for(uint32_t size) {
  if (size == 0) return ScenarioConnection::kDepth;
  return static_cast<uint32_t>(std::clamp<uint64_t>(kRingBytes / size, kMinSlots, ScenarioConnection::kDepth));
}

bool makes_receive(ConnSpec::Op op) {
  return op == ConnSpec::Op::Send || op == ConnSpec::Op::SendImm || op == ConnSpec::Op::WriteImm;
}

uint8_t wr_opcode_of(ConnSpec::Op op) {
  switch (op) {
    case ConnSpec::Op::Send: return fabric::wr_opcode::kSend;
    case ConnSpec::Op::SendImm: return fabric::wr_opcode::kSendWithImm;
    case ConnSpec::Op::Write: return fabric::wr_opcode::kRdmaWrite;
    case ConnSpec::Op::WriteImm: return fabric::wr_opcode::kRdmaWriteWithImm;
    case ConnSpec::Op::Read: return fabric::wr_opcode::kRdmaRead;
  }
  return fabric::wr_opcode::kSend;
}

uint32_t to_network(uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8),
                        static_cast<uint8_t>(v)};
  uint32_t n;
  std::memcpy(&n, b, 4);
  return n;
}

uint32_t from_network(uint32_t n) {
  uint8_t b[4];
  std::memcpy(b, &n, 4);
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

// A completion status as ibv_wc_status names it.
std::string status_text(uint8_t status) {
  namespace st = fabric::wc_status;
  const char* name = status == st::kLocLenErr        ? "LOC_LEN_ERR"
                     : status == st::kLocQpOpErr     ? "LOC_QP_OP_ERR"
                     : status == st::kLocProtErr     ? "LOC_PROT_ERR"
                     : status == st::kWrFlushErr     ? "WR_FLUSH_ERR"
                     : status == st::kBadRespErr     ? "BAD_RESP_ERR"
                     : status == st::kLocAccessErr   ? "LOC_ACCESS_ERR"
                     : status == st::kRemInvReqErr   ? "REM_INV_REQ_ERR"
                     : status == st::kRemAccessErr   ? "REM_ACCESS_ERR"
                     : status == st::kRemOpErr       ? "REM_OP_ERR"
                     : status == st::kRetryExcErr    ? "RETRY_EXC_ERR"
                     : status == st::kRnrRetryExcErr ? "RNR_RETRY_EXC_ERR"
                                                     : nullptr;
  const std::string n = "completion status " + std::to_string(status);
  return name ? n + " (IBV_WC_" + name + ")" : n;
}

const char* port_state_name(fabric::PortState s) {
  switch (s) {
    case fabric::PortState::Down: return "Down";
    case fabric::PortState::Init: return "Init";
    case fabric::PortState::Armed: return "Armed";
    case fabric::PortState::Active: return "Active";
    default: return "in no known state";
  }
}

}  // namespace

uint8_t payload_byte(uint32_t seq, uint64_t k) {
  if (k < 4) return static_cast<uint8_t>(seq >> (24 - 8 * k));
  return static_cast<uint8_t>(seq * 7u + k);
}

uint8_t read_byte(uint64_t k) { return static_cast<uint8_t>(k * 7u + (k >> 8) + 0xA5u); }

std::string ScenarioConnection::not_ready(const fabric::Hca& h) {
  const fabric::Port& p = h.port(1);
  if (p.state() == fabric::PortState::Active && p.lid != 0) return "";
  const std::string why = h.name() + "'s port 1 is " + port_state_name(p.state());
  if (p.lid == 0) return why + " with no LID: no SM has brought it up";
  return why + " (LID " + std::to_string(p.lid) + "), not Active";
}

ScenarioConnection::ScenarioConnection(fabric::Hca& a, fabric::Hca& b, const std::array<EndSizes, 2>& sizes,
                                       uint32_t serial) {
  path_mtu_ = std::min<uint8_t>({a.port(1).neighbor_mtu, b.port(1).neighbor_mtu, 5});
  make_end(0, a, sizes[0], slots_for(sizes[1].out), serial);
  make_end(1, b, sizes[1], slots_for(sizes[0].out), serial);
  bring_up(*ends_[0], *ends_[1]);
  bring_up(*ends_[1], *ends_[0]);
  for (const auto& e : ends_)
    for (uint64_t slot = 0; slot < e->receives; ++slot) post_receive(*e, slot);
  observe_host(a, sim::kind_tag("rcon"), uint64_t{ends_[0]->qpn} << 32 | ends_[1]->qpn, path_mtu_, serial);
}

ScenarioConnection::~ScenarioConnection() {
  for (const auto& e : ends_) {
    if (!e) continue;
    if (e->qpn) e->hca->destroy_qp(e->qpn);
    if (e->key) e->hca->memory().deregister(e->key);
    if (e->pd) e->hca->dealloc_pd(e->pd);
  }
}

void ScenarioConnection::make_end(int i, fabric::Hca& h, const EndSizes& sizes, uint32_t peer_window,
                                  uint32_t serial) {
  auto e = std::make_unique<End>();
  e->conn = this;
  e->index = i;
  e->hca = &h;
  e->sizes = sizes;
  e->window = slots_for(sizes.out);
  e->receives = slots_for(sizes.recv);
  e->out_at = 0;
  e->recv_at = e->out_at + uint64_t{e->window} * sizes.out;
  e->write_at = e->recv_at + uint64_t{e->receives} * sizes.recv;
  e->read_at = e->write_at + uint64_t{peer_window} * sizes.write_in;
  const uint64_t length = e->read_at + (sizes.read_in ? sizes.read_in + kDepth * kReadStride : 0);
  const uint64_t base = kMemoryBase + (uint64_t{serial} * 2 + static_cast<uint64_t>(i)) * (1ull << 32);
  e->mem = std::make_unique<fabric::BufferMemory>(base, std::max<uint64_t>(length, 1));
  std::span<uint8_t> bytes = e->mem->bytes();
  std::fill(bytes.begin(), bytes.end(), kPoison);
  for (uint64_t k = 0; k < length - e->read_at; ++k) bytes[e->read_at + k] = read_byte(k);
  e->pd = h.alloc_pd();
  e->key = h.memory().register_region(
      e->pd, *e->mem, base, e->mem->bytes().size(), base,
      fabric::access::kLocalWrite | fabric::access::kRemoteWrite | fabric::access::kRemoteRead);
  const fabric::QpCaps caps{kDepth, kDepth, 1, 1, 0};
  e->qpn = h.create_connected_qp(fabric::Transport::kRc, e->pd, caps, 0, e.get());
  // rdma_cm's initial PSN is random (cma.c); here a pure function of the port and the QP.
  e->psn = static_cast<uint32_t>(sim::mix64(h.port(1).guid(), e->qpn) & 0xFFFFFF);
  ends_[static_cast<std::size_t>(i)] = std::move(e);
}

void ScenarioConnection::bring_up(End& e, const End& peer) {
  // rdma_init_qp_attr's attributes (api/server/kernel/rdma_cm_connected.cpp)
  // for an RC QP whose connection was made with responder resources and
  // initiator depth kRdAtomic.
  QpAttr attr;
  attr.state = QpState::kInit;
  attr.port = 1;
  attr.pkey_index = 0;
  attr.access = fabric::access::kRemoteWrite | fabric::access::kRemoteRead | fabric::access::kRemoteAtomic;
  e.hca->modify_qp(e.qpn, attr, qp_mask::kState | qp_mask::kPort | qp_mask::kPkeyIndex | qp_mask::kAccessFlags);
  attr.state = QpState::kRtr;
  attr.path.dlid = peer.hca->port(1).lid;
  attr.path_mtu = path_mtu_;
  attr.dest_qp_num = peer.qpn;
  attr.rq_psn = peer.psn;
  attr.max_dest_rd_atomic = kRdAtomic;
  attr.min_rnr_timer = 0;
  e.hca->modify_qp(e.qpn, attr,
                   qp_mask::kState | qp_mask::kAv | qp_mask::kPathMtu | qp_mask::kDestQpn | qp_mask::kRqPsn |
                       qp_mask::kMaxDestRdAtomic | qp_mask::kMinRnrTimer);
  attr.state = QpState::kRts;
  attr.sq_psn = e.psn;
  attr.timeout = api::cm_ack_timeout(kCaAckDelay, sm::SaOptions{}.path_packet_life);
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = kRdAtomic;
  e.hca->modify_qp(e.qpn, attr,
                   qp_mask::kState | qp_mask::kSqPsn | qp_mask::kTimeout | qp_mask::kRetryCnt | qp_mask::kRnrRetry |
                       qp_mask::kMaxQpRdAtomic);
}

void ScenarioConnection::post_receive(End& e, uint64_t slot) {
  const uint64_t at = e.recv_at + slot * e.sizes.recv;
  std::span<uint8_t> bytes = e.mem->bytes();
  std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), e.sizes.recv, kPoison);
  const fabric::Sge sge{e.mem->base() + at, e.sizes.recv, e.key};
  fabric::RecvWr wr;
  wr.wr_id = slot;
  wr.num_sge = e.sizes.recv ? 1 : 0;
  wr.sge = &sge;
  e.hca->post_recv(e.qpn, wr);
}

void ScenarioConnection::post(int end, const ConnSpec& spec, Done done) {
  End& e = *ends_[static_cast<std::size_t>(end)];
  uint32_t slot;
  if (free_jobs_.empty()) {
    slot = static_cast<uint32_t>(jobs_.size());
    jobs_.emplace_back();
  } else {
    slot = free_jobs_.back();
    free_jobs_.pop_back();
  }
  Job& job = jobs_[slot];
  job = Job{};
  job.spec = spec;
  job.end = end;
  job.serial = next_serial_++;
  job.done = std::move(done);
  job.out.count = spec.count;
  job.out.posted = e.hca->fabric().sim().now();
  const EndSizes& peer = ends_[static_cast<std::size_t>(1 - end)]->sizes;
  const uint32_t room = spec.op == ConnSpec::Op::Send || spec.op == ConnSpec::Op::SendImm ? peer.recv
                        : spec.op == ConnSpec::Op::Read                                    ? peer.read_in
                                                                                            : peer.write_in;
  if (spec.size > e.sizes.out || spec.size > room) {
    problem(job, std::to_string(spec.size) + " B is more than the connection's buffers were made for");
    job.out.finished = true;
    finish(slot);
    return;
  }
  e.waiting.push_back(slot);
  pump(e);
}

void ScenarioConnection::pump(End& e) {
  e.pump_scheduled = false;
  while (!e.waiting.empty() && e.posted - e.completed < e.window) {
    const uint32_t slot = e.waiting.front();
    post_one(e, jobs_[slot]);
    if (jobs_[slot].next < jobs_[slot].spec.count) continue;
    e.waiting.pop_front();
    maybe_done(slot);  // a post whose every request was refused
  }
}

void ScenarioConnection::post_one(End& e, Job& job) {
  End& peer = *ends_[static_cast<std::size_t>(1 - e.index)];
  const uint32_t i = job.next++;
  const uint64_t n = e.posted++;
  const uint32_t size = job.spec.size;
  e.ring[n % kDepth] = Wr{static_cast<uint32_t>(&job - jobs_.data()), i};
  std::span<uint8_t> mine = e.mem->bytes();
  const uint64_t out = out_offset(e.index, n);
  fabric::SendWr wr;
  wr.wr_id = n;
  wr.opcode = wr_opcode_of(job.spec.op);
  wr.flags = fabric::send_flag::kSignaled;
  if (job.spec.op == ConnSpec::Op::Read) {
    std::fill_n(mine.begin() + static_cast<std::ptrdiff_t>(out), size, kPoison);
    wr.remote_addr = peer.mem->base() + peer.read_at + (n % kDepth) * kReadStride;
  } else {
    for (uint32_t k = 0; k < size; ++k) mine[out + k] = payload_byte(i, k);
  }
  if (job.spec.op == ConnSpec::Op::Write || job.spec.op == ConnSpec::Op::WriteImm) {
    const uint64_t target = peer.write_at + (n % e.window) * peer.sizes.write_in;
    std::fill_n(peer.mem->bytes().begin() + static_cast<std::ptrdiff_t>(target), size, kPoison);
    wr.remote_addr = peer.mem->base() + target;
  }
  if (job.spec.op == ConnSpec::Op::Read || job.spec.op == ConnSpec::Op::Write ||
      job.spec.op == ConnSpec::Op::WriteImm)
    wr.rkey = peer.key;
  if (job.spec.op == ConnSpec::Op::SendImm || job.spec.op == ConnSpec::Op::WriteImm)
    wr.imm_data = to_network(job.spec.imm + i);
  const fabric::Sge sge{e.mem->base() + out, size, e.key};
  wr.num_sge = size ? 1 : 0;
  wr.sge = &sge;
  if (makes_receive(job.spec.op)) peer.due.push_back(Due{e.ring[n % kDepth].job, job.serial, i});
  if (const int rc = e.hca->post_send(e.qpn, wr)) {
    // Not taken (the queue has room and the QP is past INIT, so this is
    // the model refusing what a verbs user may post): the message counts
    // as completed with the problem.
    --e.posted;
    if (makes_receive(job.spec.op)) peer.due.pop_back();
    problem(job, "message " + std::to_string(i) + ": ibv_post_send returned " + std::to_string(rc));
    ++job.out.completions;
  }
}

template <typename Want>
int64_t ScenarioConnection::mismatch(End& e, uint64_t offset, uint64_t n, Want want) const {
  const std::span<const uint8_t> bytes = e.mem->bytes();
  for (uint64_t k = 0; k < n; ++k)
    if (bytes[offset + k] != want(k)) return static_cast<int64_t>(k);
  return -1;
}

void ScenarioConnection::sent(End& e, const fabric::WorkCompletion& wc) {
  const Wr wr = e.ring[wc.wr_id % kDepth];
  ++e.completed;
  Job& job = jobs_[wr.job];
  End& peer = *ends_[static_cast<std::size_t>(1 - e.index)];
  const uint32_t size = job.spec.size;
  int64_t bad = -1;
  if (wc.status == fabric::wc_status::kSuccess) {
    ++job.out.success;
    if (job.spec.op == ConnSpec::Op::Read) {
      const uint64_t from = (wc.wr_id % kDepth) * kReadStride;
      bad = mismatch(e, out_offset(e.index, wc.wr_id), size, [from](uint64_t k) { return read_byte(from + k); });
    } else if (job.spec.op == ConnSpec::Op::Write || job.spec.op == ConnSpec::Op::WriteImm) {
      const uint64_t target = peer.write_at + (wc.wr_id % e.window) * peer.sizes.write_in;
      bad = mismatch(peer, target, size, [i = wr.i](uint64_t k) { return payload_byte(i, k); });
    }
    if (bad >= 0) {
      job.out.data_intact = false;
      problem(job, "message " + std::to_string(wr.i) + ": byte " + std::to_string(bad) + " is not what was " +
                       (job.spec.op == ConnSpec::Op::Read ? "read" : "written"));
    }
  } else if (wc.status == fabric::wc_status::kWrFlushErr && closed_) {
    ++job.out.flushed;
  } else {
    problem(job, "message " + std::to_string(wr.i) + ": " + status_text(wc.status));
  }
  observe_host(*e.hca, sim::kind_tag("rcsc"), uint64_t{wc.qp_num} << 32 | wr.i,
               uint64_t{wc.status} << 48 | uint64_t{wc.opcode} << 40 | uint64_t{wc.wc_flags} << 32 | wc.byte_len,
               static_cast<uint64_t>(bad + 1));
  ++job.out.completions;
  job.out.last = e.hca->fabric().sim().now();
  maybe_done(wr.job);
  if (!e.pump_scheduled && !e.waiting.empty()) {
    // The application polls the completion, then posts into the room it made.
    e.pump_scheduled = true;
    e.hca->fabric().sim().schedule(sim::Time::zero(), [this, &e] { pump(e); });
  }
}

void ScenarioConnection::received(End& e, const fabric::WorkCompletion& wc) {
  observe_host(*e.hca, sim::kind_tag("rcrv"), uint64_t{wc.qp_num} << 32 | wc.src_qp,
               uint64_t{wc.status} << 48 | uint64_t{wc.opcode} << 40 | uint64_t{wc.wc_flags} << 32 | wc.byte_len,
               from_network(wc.imm_data));
  // A receive flushed by the QP's move to ERR belongs to no message.
  if (wc.status == fabric::wc_status::kWrFlushErr) return;
  while (!e.due.empty() && jobs_[e.due.front().job].serial != e.due.front().serial) e.due.pop_front();
  if (e.due.empty()) {  // a post already reported: nothing is left to check it against
    if (wc.status == fabric::wc_status::kSuccess) post_receive(e, wc.wr_id);
    return;
  }
  const Due due = e.due.front();
  e.due.pop_front();
  Job& job = jobs_[due.job];
  const ConnSpec& s = job.spec;
  const std::string what = "receive of message " + std::to_string(due.i) + ": ";
  const uint8_t opcode =
      s.op == ConnSpec::Op::WriteImm ? fabric::wc_opcode::kRecvRdmaWithImm : fabric::wc_opcode::kRecv;
  const bool imm = s.op != ConnSpec::Op::Send;
  int64_t bad = -1;
  if (wc.status != fabric::wc_status::kSuccess) {
    problem(job, what + status_text(wc.status));
  } else if (wc.opcode != opcode) {
    problem(job, what + "opcode " + std::to_string(wc.opcode) + ", not " + std::to_string(opcode));
  } else if (wc.byte_len != s.size) {
    problem(job, what + std::to_string(wc.byte_len) + " B, not " + std::to_string(s.size));
  } else if (imm != ((wc.wc_flags & fabric::wc_flag::kWithImm) != 0) ||
             (imm && from_network(wc.imm_data) != s.imm + due.i)) {
    problem(job, what + (imm ? "immediate data " + hex(from_network(wc.imm_data)) + ", not " + hex(s.imm + due.i)
                             : std::string("immediate data where none was sent")));
  } else if (s.op != ConnSpec::Op::WriteImm) {
    bad = mismatch(e, e.recv_at + wc.wr_id * e.sizes.recv, s.size, [i = due.i](uint64_t k) {
      return payload_byte(i, k);
    });
    if (bad >= 0) {
      job.out.data_intact = false;
      problem(job, what + "byte " + std::to_string(bad) + " is not what was sent");
    }
  }
  if (wc.status == fabric::wc_status::kSuccess) post_receive(e, wc.wr_id);  // checked: now it may be reused
  observe_host(*e.hca, sim::kind_tag("rcck"), due.i, static_cast<uint64_t>(bad + 1), job.out.problem.size());
  ++job.out.receives;
  job.out.last = e.hca->fabric().sim().now();
  maybe_done(due.job);
}

void ScenarioConnection::problem(Job& job, const std::string& what) {
  if (job.out.problem.empty()) job.out.problem = what;
}

void ScenarioConnection::maybe_done(uint32_t slot) {
  Job& job = jobs_[slot];
  if (job.serial == 0 || job.out.completions < job.spec.count) return;
  // Every message acknowledged made its receive before the ACK left; a
  // connection in ERR makes no more.
  const End& e = *ends_[static_cast<std::size_t>(job.end)];
  const bool broken = closed_ || e.hca->qp_state(e.qpn) == QpState::kError;
  if (makes_receive(job.spec.op) && job.out.receives < job.out.success && !broken) return;
  job.out.finished = true;
  finish(slot);
}

void ScenarioConnection::finish(uint32_t slot) {
  Job& job = jobs_[slot];
  Done done = std::move(job.done);
  const PostOutcome out = job.out;
  job.serial = 0;
  free_jobs_.push_back(slot);
  if (done) done(out);
}

void ScenarioConnection::disconnect() {
  closed_ = true;
  QpAttr attr;
  attr.state = QpState::kError;
  for (const auto& e : ends_) {
    e->hca->modify_qp(e->qpn, attr, qp_mask::kState);
    e->due.clear();
    observe_host(*e->hca, sim::kind_tag("rdis"), e->qpn, 0, 0);
  }
}

void ScenarioConnection::end_of_run() {
  for (uint32_t slot = 0; slot < jobs_.size(); ++slot)
    if (jobs_[slot].serial != 0) finish(slot);
}

}  // namespace ibfab::scenario

#include "api/server/engine.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <stdexcept>

#include "api/server/engine_connection.h"
#include "api/server/rmpp_receiver.h"
#include "api/client/program_clock.h"
#include "api/client/seqpacket.h"
#include "api/client/cm_protocol.h"
#include "api/client/verbs_protocol.h"
#include "fabric/model/hca.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/rmpp_header.h"
#include "sm/partitions/partition_reader.h"
#include "sm/sa/rmpp_sender.h"

namespace ibfab::api {

namespace {

// This thread's CPU time (ns).
int64_t thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

ib_mad_addr to_umad(const fabric::MadAddress& a) {
  ib_mad_addr out{};
  out.qpn = htobe32(a.qpn);
  out.qkey = htobe32(a.qkey);
  out.lid = htobe16(a.lid);
  out.sl = a.sl;
  out.grh_present = a.has_grh ? 1 : 0;
  std::memcpy(out.gid, a.gid.data(), 16);
  out.pkey_index = a.pkey_index;
  return out;
}

fabric::MadAddress from_umad(const ib_mad_addr& a) {
  fabric::MadAddress out;
  out.qpn = be32toh(a.qpn);
  out.qkey = be32toh(a.qkey);
  out.lid = be16toh(a.lid);
  out.sl = a.sl;
  out.has_grh = a.grh_present != 0;
  std::memcpy(out.gid.data(), a.gid, 16);
  out.pkey_index = a.pkey_index;
  return out;
}

constexpr uint8_t kResponseBit = 0x80;

// The rate sysfs reports for a link, in Mb/s: lanes x the nominal lane
// rate (2.5, 5, 10, 14, 25, 50, 100 Gb/s for SDR .. NDR).
uint32_t nominal_mbps(const fabric::LinkRate& r) {
  static constexpr uint32_t kLane[] = {2'500, 5'000, 10'000, 14'000, 25'000, 50'000, 100'000};
  const auto speed = static_cast<std::size_t>(r.speed);
  return speed < std::size(kLane) ? kLane[speed] * static_cast<uint32_t>(r.lanes()) : 0;
}

}  // namespace

// A umad agent: registered on the HCA, forwarding what it receives to its
// MAD port's socket, and timing out requests the way the kernel does.
class Engine::UmadAgent final : public fabric::MadAgent {
 public:
  UmadAgent(Engine& engine, Connection& conn, uint32_t id) : engine_(engine), conn_(conn), id_(id) {}
  ~UmadAgent() override {
    for (auto& [tid, p] : pending_) engine_.sim_.cancel(p.timer);
    if (hca_id) conn_.hca->unregister_agent(hca_id);
  }

  uint32_t hca_id = 0;
  bool rmpp = false;  // registered with an RMPP version: transfers are coalesced

  void on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) override {
    if (sender_ && mad.size() >= 36 && (mad[26] & wire::RmppHeader::kFlagActive) &&
        mad[25] != wire::RmppHeader::kTypeData && sender_->on_rmpp(from.lid, mad))
      return;  // an ACK, STOP or ABORT of a transfer this agent sends
    std::vector<uint8_t> ack, whole;
    const RmppReceiver::Outcome o = rmpp ? rmpp_.receive(from.lid, mad, ack, whole) : RmppReceiver::Outcome::NotRmpp;
    if (o != RmppReceiver::Outcome::NotRmpp) conn_.hca->send_mad(hca_id, from, ack, /*keep_tid=*/true);
    if (o == RmppReceiver::Outcome::Pending) return;
    const std::span<const uint8_t> message = o == RmppReceiver::Outcome::Done ? std::span<const uint8_t>(whole) : mad;
    if (message.size() >= 16 && (message[3] & kResponseBit)) {
      auto it = pending_.find(static_cast<uint32_t>(wire::load_be64(&message[8])));
      if (it != pending_.end()) {
        engine_.sim_.cancel(it->second.timer);
        pending_.erase(it);
      }
    }
    deliver(0, from, message);
  }

  // A MAD from the client; requests with a timeout are watched. An SA
  // message with the RMPP Active flag from an RMPP agent is segmented and
  // sent by RMPP, as the kernel does; anything else is one MAD.
  void send(const MadEnvelope& env, std::span<const uint8_t> message) {
    const fabric::MadAddress to = from_umad(env.addr);
    if (rmpp && message.size() >= sm::RmppSender::kHeaderSize && message[1] == 0x03 &&
        (message[26] & wire::RmppHeader::kFlagActive)) {
      if (!sender_)
        sender_ = std::make_unique<sm::RmppSender>(
            engine_.sim_,
            [this](const fabric::MadAddress& dst, std::span<const uint8_t> seg) {
              conn_.hca->send_mad(hca_id, dst, seg, /*keep_tid=*/true);
            },
            sm::RmppSender::Options{});
      // A request carries this agent's id in TID bits 63:32, as any other
      // request does, so that its ACKs and response find their way back.
      std::array<uint8_t, sm::RmppSender::kHeaderSize> header;
      std::copy_n(message.begin(), header.size(), header.begin());
      if (!(header[3] & kResponseBit)) wire::store_be32(&header[8], hca_id);
      sender_->start(to, header, std::vector<uint8_t>(message.begin() + header.size(), message.end()));
      return;
    }
    Pending p;
    p.to = to;
    std::copy_n(message.begin(), std::min(message.size(), p.mad.size()), p.mad.begin());
    if (!conn_.hca->send_mad(hca_id, p.to, p.mad)) {
      deliver(EINVAL, p.to, p.mad);
      return;
    }
    if (env.timeout_ms == 0 || (p.mad[3] & kResponseBit)) return;
    const auto tid = static_cast<uint32_t>(wire::load_be64(&p.mad[8]));
    p.timeout = sim::Time::ms(env.timeout_ms);
    p.retries = env.retries;
    if (auto old = pending_.find(tid); old != pending_.end()) engine_.sim_.cancel(old->second.timer);
    p.timer = engine_.sim_.schedule(p.timeout, [this, tid] { expire(tid); });
    pending_[tid] = p;
  }

 private:
  struct Pending {
    fabric::MadAddress to;
    std::array<uint8_t, kMaxMad> mad{};
    sim::Time timeout;
    uint32_t retries = 0;
    sim::EventHandle timer;
  };

  void expire(uint32_t tid) {
    auto it = pending_.find(tid);
    if (it == pending_.end()) return;
    Pending& p = it->second;
    if (p.retries > 0) {
      --p.retries;
      conn_.hca->send_mad(hca_id, p.to, p.mad);
      p.timer = engine_.sim_.schedule(p.timeout, [this, tid] { expire(tid); });
      return;
    }
    const Pending done = p;
    pending_.erase(it);
    deliver(ETIMEDOUT, done.to, done.mad);
  }

  void deliver(int status, const fabric::MadAddress& addr, std::span<const uint8_t> mad) {
    MadEnvelope env;
    env.agent = id_;
    env.status = status;
    env.total = static_cast<uint32_t>(mad.size());
    env.addr = to_umad(addr);
    for (std::size_t at = 0; at == 0 || at < mad.size(); at += kFragment) {
      const std::span<const uint8_t> part = mad.subspan(at, std::min(kFragment, mad.size() - at));
      env.length = static_cast<uint32_t>(part.size());
      engine_.post(conn_, MsgType::RecvMad, &env, sizeof env, part);
    }
  }

  Engine& engine_;
  Connection& conn_;
  uint32_t id_;
  std::map<uint32_t, Pending> pending_;  // by TID bits 31:0
  RmppReceiver rmpp_;
  std::unique_ptr<sm::RmppSender> sender_;  // made at the first RMPP send
};

Engine::Engine(EngineOptions options)
    : options_(std::move(options)),
      topology_(topo::load_topology(options_.topology)),
      addresses_(topology_, options_.addresses) {
  if (options_.progress) sim_.report_progress_to(*options_.progress);
  fabric_ = std::make_unique<fabric::Fabric>(sim_, topology_);
  cm_ = std::make_unique<CmService>(*fabric_, addresses_, options_.every_host_local);
  for (uint32_t i = 0; i < fabric_->node_count(); ++i)
    if (!fabric_->node(i).is_switch()) hosts_.push_back(static_cast<fabric::Hca*>(&fabric_->node(i)));
  verbs_.set_rx_grace_ns(options_.rx_grace_us * 1000);
  verbs_.set_log([this](const std::string& text) { log(text); });
  faults_ = std::make_unique<FaultSchedule>(*fabric_, options_.faults,
                                            [this](const std::string& text) { log(text); });
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!options_.pcap.empty()) {
    if (const std::string e = pcap_.open(options_.pcap, wire::PcapWriter::Link::kErf); !e.empty())
      throw std::runtime_error(e);
    fabric_->capture(&pcap_);
  }
  if (!options_.builtin_sm) return;
  fabric::Hca* host = nullptr;
  if (!options_.sm_node.empty()) {
    host = fabric_->find_hca(options_.sm_node);
    if (!host) throw std::invalid_argument("no host '" + options_.sm_node + "' for the SM");
  } else {
    if (hosts_.empty()) throw std::invalid_argument("the topology has no host for the SM");
    host = hosts_.front();
  }
  sm::SmOptions sm_options;
  sm_options.groups.send_only_full_member = options_.sa_send_only_full;
  sm_options.routing = options_.routing;
  if (!options_.partitions.empty()) sm_options.partition_config = sm::partitions::load_partitions(options_.partitions);
  sm_ = std::make_unique<sm::SubnetManager>(*host, 1, sm_options);
}

Engine::~Engine() {
  for (auto& [fd, c] : connections_) {
    c->agents.clear();
    if (c->verbs) verbs_.close(c->verbs);
    if (c->cm) cm_->close(c->cm);
    ::close(fd);
  }
  connections_.clear();
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  cm_.reset();
  sm_.reset();
  fabric_.reset();
  faults_.reset();  // after the fabric, which discards the events that refer to it
}

std::string Engine::bring_up() {
  if (!sm_) return "";
  sm_->start();
  const sim::Time limit = sim_.now() + sim::Time::s(60);
  while (!sm_->subnet_up() && sim_.now() < limit) {
    const std::optional<sim::Time> next = sim_.next_time();
    if (!next || *next > limit) break;
    sim_.step();
  }
  if (!sm_->subnet_up()) return "the subnet did not come up: " + sm_->last_sweep().error;
  // Then IPoIB: every Active port joins its broadcast group, as the hosts'
  // ipoib drivers would before any application starts.
  sim::Progress& progress = sim_.progress();
  progress.begin("IPoIB joins", "hosts", cm_->hosts());
  const sim::Time ipoib_limit = sim_.now() + sim::Time::s(60);
  for (uint64_t steps = 1; !cm_->ipoib_settled() && sim_.now() < ipoib_limit; ++steps) {
    const std::optional<sim::Time> next = sim_.next_time();
    if (!next || *next > ipoib_limit) break;
    sim_.step();
    if (steps % 65536 == 0) progress.set_done(cm_->ipoib_hosts_settled());
  }
  return "";
}

std::vector<std::string> Engine::ud_drops() const {
  std::vector<std::string> out;
  for (const fabric::Hca* h : hosts_)
    if (const uint64_t n = h->ud_stats().no_receive + verbs_.late_drops(*h))
      out.push_back(h->name() + ": " + std::to_string(n) + " UD messages dropped, no receive posted");
  return out;
}

void Engine::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void Engine::serve(int listen_fd, const std::atomic<bool>& stop) {
  while (!stop.load()) serve_once(listen_fd, 100);
}

void Engine::serve_once(int listen_fd, int max_wait_ms) {
  std::unique_lock lock(round_mu_);
  if (!serving_) {
    clock_base_ = sim_.now();
    wall_base_ns_ = wall_ns();
    serving_ = true;
    faults_->start();
  }
  wake_engine_ = false;  // this round looks at everything
  // Verbs work: while there is some, or was within kSpin, the engine does
  // not sleep, and looks at its sockets only every kSocketRounds rounds.
  const bool busy = run_rings();
  if (cm_->backlog()) cm_->flush();
  charge_cm();
  const int64_t now = wall_ns();
  if (busy) last_verbs_work_ns_ = now;
  const bool yielding = now - descheduled_ns_ < kYieldNs;
  const bool spinning = spin_ && verbs_.has_qps() && now - last_verbs_work_ns_ < kSpinNs && !yielding;
  if (!spinning && spin_mark_wall_ns_ >= 0 && now - last_verbs_work_ns_ >= kSpinNs) {
    // A spin that found no work: its client was not running to post any.
    if (now - wasted_spins_since_ns_ > kWastedWindowNs) {
      wasted_spins_since_ns_ = now;
      wasted_spins_ = 0;
    }
    if (++wasted_spins_ >= kWastedSpins) descheduled_ns_ = now;
  }
  if (!spinning) spin_mark_wall_ns_ = -1;
  int wait_ms = std::min(advance(), max_wait_ms);
  if (!unsettled_.empty()) wait_ms = 0;  // MADs read and left for the next round
  if (spinning) {
    // A caller that would wait (serve) gets its sockets looked at every
    // kSocketRounds rounds; one that would not (max_wait_ms 0) every round.
    if (max_wait_ms > 0 && ++spin_rounds_ % kSocketRounds != 0) return;
    // Descheduled since the last such round: its wall time exceeds its
    // CPU time. Spinning would now only take a core some other thread wants.
    const int64_t cpu = thread_cpu_ns();
    if (spin_mark_wall_ns_ >= 0 && (now - spin_mark_wall_ns_) - (cpu - spin_mark_cpu_ns_) > kDescheduledNs)
      descheduled_ns_ = now;
    spin_mark_wall_ns_ = now;
    spin_mark_cpu_ns_ = cpu;
    wait_ms = 0;
  }
  bool sleeping = false;
  if (wait_ms > 0) {
    sleeping = verbs_.prepare_to_sleep(yielding);
    if (!sleeping) wait_ms = 0;  // work arrived meanwhile
  }
  sleep_until_ns_ = now + int64_t{wait_ms} * 1'000'000;
  std::vector<pollfd>& fds = pollfds_;  // kept between rounds: no allocation per round
  fds.clear();
  const bool accepting = listen_fd >= 0 && now >= listen_paused_until_ns_;
  fds.push_back({listen_fd, static_cast<short>(accepting ? POLLIN : 0), 0});
  fds.push_back({verbs_.doorbell_fd(), POLLIN, 0});
  for (const auto& [fd, c] : connections_) {
    const short events = c->out.empty() ? POLLIN : reads_while_queued(*c) ? POLLIN | POLLOUT : POLLOUT;
    fds.push_back({fd, events, 0});
  }
  lock.unlock();  // drive() may run rounds meanwhile
  const int ready = ::poll(fds.data(), fds.size(), wait_ms);
  lock.lock();
  if (sleeping) verbs_.woke();
  if (ready < 0) return;  // EINTR: the caller looks at its stop flag
  if (listen_fd >= 0 && (fds[0].revents & POLLIN)) accept_clients(listen_fd);
  for (std::size_t i = 2; i < fds.size(); ++i) {
    auto it = connections_.find(fds[i].fd);
    if (it == connections_.end()) continue;
    Connection& c = *it->second;
    bool keep = !c.broken;
    if (keep && (fds[i].revents & POLLOUT)) keep = flush(c);
    if (keep && (fds[i].revents & POLLIN)) keep = read_from(c);
    else if (keep && (fds[i].revents & (POLLHUP | POLLERR))) keep = false;
    if (!keep || c.broken) close_connection(fds[i].fd);
  }
}

Engine::Drive Engine::drive() {
  std::unique_lock lock(round_mu_, std::try_to_lock);
  if (!lock.owns_lock() || !serving_) return Drive::kBusy;
  run_rings();
  const int wait_ms = advance();
  // advance() rounds its answer up to whole ms: the engine's thread may
  // wake up to 2 ms after an event that is not yet due, which the
  // lookahead covers.
  const int64_t next_ns = wall_ns() + int64_t{wait_ms + 2} * 1'000'000;
  return wake_engine_ || !unsettled_.empty() || cm_->backlog() || next_ns < sleep_until_ns_ ? Drive::kWake
                                                                                           : Drive::kDone;
}

void Engine::order(uint32_t pid) {
  const Process& p = processes_[pid];
  const bool both = !p.mad_ports.empty() && !p.verbs.empty();
  for (VerbsContext* v : p.verbs) verbs_.set_ordered_by_caller(*v, both);
  std::erase(ordered_, pid);
  if (both) ordered_.push_back(pid);
}

void Engine::forget(uint32_t pid, const Connection& c) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  std::erase(it->second.verbs, c.verbs);
  std::erase(it->second.mad_ports, &c);
  order(pid);
  if (it->second.verbs.empty() && it->second.mad_ports.empty()) processes_.erase(it);
  if (c.verbs) count_verbs_clients();
}

bool Engine::hold_next(Connection& c) {
  if (!c.held.empty()) return true;
  static std::array<uint8_t, kMaxMessage> buf;
  const ssize_t n = recv_message(c.fd, buf);
  if (n == -EAGAIN) return false;
  if (n <= 0) {
    if (n == -EMSGSIZE) refuse(c, EMSGSIZE, "message too large");
    c.broken = true;
    return false;
  }
  c.held.assign(buf.begin(), buf.begin() + n);
  c.held_stamp = 0;
  if (type_of(c.held) == MsgType::SendMad && c.held.size() >= sizeof(MsgHeader) + sizeof(MadEnvelope)) {
    MadEnvelope env;
    std::memcpy(&env, c.held.data() + sizeof(MsgHeader), sizeof env);
    c.held_stamp = env.stamp;
  }
  return true;
}

void Engine::take_posted_work(uint32_t pid, std::size_t max_mads) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  // Handling a MAD changes no process's connections: `p` stays valid.
  const Process& p = it->second;
  std::size_t taken = 0;
  // Each pass takes what the process did before the pass began. A MAD read
  // in a pass but sent after it began waits for the next; one that is
  // still waiting after kOrderPasses (a process that sends faster than the
  // engine takes) is taken in the next round.
  for (int pass = 0; pass < kOrderPasses; ++pass) {
    const uint64_t limit = program_clock_ns();
    bool later = false;
    for (;;) {
      Connection* next = nullptr;
      later = false;
      for (Connection* c : p.mad_ports) {
        if (c->broken || !hold_next(*c)) continue;
        if (c->held_stamp >= limit) later = true;
        else if (!next || c->held_stamp < next->held_stamp) next = c;
      }
      if (!next) break;
      for (VerbsContext* v : p.verbs) verbs_.take_posted(*v, next->held_stamp);
      if (taken++ == max_mads) {  // the rest in the next round, from this MAD on
        later = true;
        break;
      }
      ReceivedFds none;
      if (!handle(*next, next->held, none)) next->broken = wake_engine_ = true;  // handle reads no MAD port itself
      // Keeps its capacity for the next MAD, but not a fragment's (a port
      // idle after a long message would hold up to kMaxMessage for nothing).
      if (next->held.capacity() > 4 * kMaxMad) std::vector<uint8_t>().swap(next->held);
      next->held.clear();
    }
    if (taken > max_mads) break;
    for (VerbsContext* v : p.verbs) verbs_.take_posted(*v, limit);
    if (!later) return;
  }
  if (std::find(unsettled_.begin(), unsettled_.end(), pid) == unsettled_.end()) unsettled_.push_back(pid);
}

bool Engine::run_rings() {
  bool work = verbs_.run_rings();  // the processes without MAD ports
  if (!unsettled_.empty()) {
    std::vector<uint32_t> pids;
    pids.swap(unsettled_);
    for (uint32_t pid : pids) take_posted_work(pid, kMadsPerRound);
    work = true;
  }
  for (const uint32_t pid : ordered_) {
    const Process& p = processes_[pid];
    bool posted = false;
    for (VerbsContext* v : p.verbs) posted |= verbs_.posted(*v);
    if (posted) {
      take_posted_work(pid, kMadsPerRound);  // changes no process's connections: ordered_ stays as it is
      work = true;
    } else {
      for (VerbsContext* v : p.verbs) work |= verbs_.run_rings(*v, 0);  // receives and flushes only
    }
  }
  return work;
}

void Engine::count_verbs_clients() {
  std::size_t processes = 1;  // the engine's own
  for (const auto& [pid, p] : processes_)
    if (!p.verbs.empty() && pid != static_cast<uint32_t>(::getpid())) ++processes;
  spin_ = processes <= static_cast<std::size_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

void Engine::adopt(int fd) {
  auto c = std::make_unique<Connection>();
  c->fd = fd;
  connections_.emplace(fd, std::move(c));
}

int Engine::advance() {
  const sim::Time paced = clock_base_ + sim::Time::ns(wall_ns() - wall_base_ns_);
  const sim::Time horizon = paced + options_.lookahead;
  for (;;) {
    const std::optional<sim::Time> next = sim_.next_time();
    if (!next || *next > horizon) break;
    sim_.step();
  }
  if (sim_.now() < paced) sim_.run_until(paced);
  const std::optional<sim::Time> next = sim_.next_time();
  if (!next) return 100;
  const int64_t ms = (*next - horizon).ps() / 1'000'000'000 + 1;
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 100));
}

void Engine::post(Connection& c, MsgType type, const void* body, std::size_t size, std::span<const uint8_t> tail) {
  if (c.broken) return;
  if (c.out.empty()) {
    const int e = send_message(c.fd, type, body, size, tail);
    if (e == 0) return;
    if (e == -EMSGSIZE) {  // larger than the socket can ever take (COMPATIBILITY.md)
      log(c.who() + ": a " + std::to_string(size + tail.size()) + "-byte message is too large for the socket, dropped");
      return;
    }
    if (e != -EAGAIN) {
      c.broken = true;
      return;
    }
  }
  MsgHeader h;
  h.type = static_cast<uint16_t>(type);
  h.length = static_cast<uint32_t>(size + tail.size());
  std::vector<uint8_t> m(sizeof h + size + tail.size());
  std::memcpy(m.data(), &h, sizeof h);
  std::memcpy(m.data() + sizeof h, body, size);
  std::copy(tail.begin(), tail.end(), m.begin() + static_cast<std::ptrdiff_t>(sizeof h + size));
  const std::size_t bytes = m.size();
  c.out.push_back(std::move(m));
  wake_engine_ = true;  // to wait for the socket to take it
  charge(c, static_cast<std::ptrdiff_t>(bytes));
}

bool Engine::flush(Connection& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.front().data(), c.out.front().size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    charge(c, -static_cast<std::ptrdiff_t>(c.out.front().size()));
    c.out.pop_front();
  }
  return true;
}

bool Engine::reads_while_queued(const Connection& c) { return c.greeted && c.kind == ConnectionKind::MadPort; }

bool Engine::read_from(Connection& c) {
  if (c.greeted && c.kind == ConnectionKind::MadPort) {  // in program order with the process's rings
    take_posted_work(c.pid, kMadsPerRound);
    return !c.broken;
  }
  static std::array<uint8_t, kMaxMessage> buf;
  ReceivedFds fds;
  // A request waits while its client has an answer to take; the rest of
  // what it sent is read in later rounds (poll says so: level-triggered).
  for (int i = 0; i < kReadsPerRound && c.out.empty(); ++i) {
    const ssize_t n = recv_message(c.fd, buf, &fds);
    if (n == -EAGAIN) return true;
    if (n == -EMSGSIZE) return refuse(c, EMSGSIZE, "message too large");
    if (n <= 0) return false;
    if (!handle(c, std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n)), fds)) return false;
    fds.close_all();  // what the message did not take
    if (c.greeted && c.kind == ConnectionKind::MadPort) return read_from(c);
  }
  return true;
}

bool Engine::handle(Connection& c, std::span<const uint8_t> msg, ReceivedFds& fds) {
  const std::optional<MsgType> type = type_of(msg);
  if (!type) return refuse(c, EPROTO, "not a protocol message");
  if (!c.greeted)
    return *type == MsgType::Hello ? hello(c, msg, fds) : refuse(c, EPROTO, "the first message must be Hello");
  if (c.kind != ConnectionKind::MadPort) take_posted_work(c.pid);  // MAD ports: read by it
  if (c.kind == ConnectionKind::Cm && *type >= MsgType::CmCreateChannel && *type < MsgType::CmReply) {
    const CmReply r = cm_->handle(*c.cm, *type, msg, fds);
    post(c, MsgType::CmReply, &r, sizeof r);
    return true;
  }
  if (c.kind == ConnectionKind::Verbs && *type >= MsgType::CreateChannel && *type < MsgType::VerbsReply) {
    VerbsReply r;
    r.value = verbs_.handle(*c.verbs, *type, msg, fds);
    post(c, MsgType::VerbsReply, &r, sizeof r);
    return true;
  }
  switch (*type) {
    case MsgType::QueryNode:
      if (c.kind == ConnectionKind::MadPort) break;
      query_node(c, msg);
      return true;
    case MsgType::ListHosts:
      if (c.kind != ConnectionKind::Control) break;
      list_hosts(c, msg);
      return true;
    case MsgType::RegisterAgent:
      if (c.kind != ConnectionKind::Control) break;  // the agent's host is its MAD port's
      register_agent(c, msg);
      return true;
    case MsgType::UnregisterAgent:
      if (c.kind != ConnectionKind::Control) break;
      unregister_agent(c, msg);
      return true;
    case MsgType::SendMad:
      if (c.kind != ConnectionKind::MadPort) break;
      return send_mad(c, msg);
    default:
      break;
  }
  return refuse(c, EPROTO, "unexpected message on this connection");
}

bool Engine::hello(Connection& c, std::span<const uint8_t> msg, ReceivedFds& fds) {
  const std::optional<Hello> h = body_as<Hello>(msg, MsgType::Hello);
  if (!h || h->version != kProtocolVersion || h->kind > ConnectionKind::Cm)
    return refuse(c, EPROTO, "bad Hello (protocol version " + std::to_string(kProtocolVersion) + " expected)");
  const std::string node(h->node, strnlen(h->node, sizeof h->node));
  HelloReply r;
  r.flags = options_.every_host_local ? kEveryHostLocal : 0;
  fabric::Hca* hca = fabric_->find_hca(node);
  const bool hostless = node.empty() && (h->kind == ConnectionKind::Control || h->kind == ConnectionKind::Cm);
  if (h->kind == ConnectionKind::Verbs && fds.count != 1) return refuse(c, EPROTO, "a verbs Hello brings its async fd");
  if ((!hca && !hostless) || (h->kind == ConnectionKind::MadPort && (h->port < 1 || h->port > hca->num_ports()))) {
    r.status = -ENODEV;
    post(c, MsgType::HelloReply, &r, sizeof r);
    return refuse(c, ENODEV, hca ? node + " has no port " + std::to_string(h->port) : "no host named '" + node + "'");
  }
  c.greeted = true;
  c.kind = h->kind;
  c.pid = h->pid;
  c.hca = hca;
  c.port = h->port;
  if (c.kind == ConnectionKind::MadPort) {
    c.handle = next_handle_++;
    process(c.pid).mad_ports.push_back(&c);
    order(c.pid);
  }
  r.handle = c.handle;
  if (c.kind == ConnectionKind::Cm) c.cm = cm_->open(hca, c.pid);
  if (c.kind == ConnectionKind::Verbs) {
    // The process whose memory its registrations name: the kernel's word
    // for who is at the other end, not the pid the Hello claims.
    ucred peer{};
    socklen_t len = sizeof peer;
    if (::getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.pid <= 0)
      return refuse(c, EPROTO, "cannot tell which process is at the other end of a verbs connection");
    c.verbs = verbs_.open(*hca, fds.take(0), peer.pid);
    process(c.pid).verbs.push_back(c.verbs);
    order(c.pid);
    count_verbs_clients();
    const int give[] = {verbs_.doorbell_fd(), verbs_.page_fd()};
    if (send_message(c.fd, MsgType::HelloReply, &r, sizeof r, {}, give) != 0) return false;
  } else {
    post(c, MsgType::HelloReply, &r, sizeof r);
  }
  if (hca)
    log(c.who() + " attached to " + node +
        (c.kind == ConnectionKind::MadPort ? " (MAD port " + std::to_string(c.port) + ")"
         : c.kind == ConnectionKind::Verbs ? " (verbs)"
         : c.kind == ConnectionKind::Cm    ? " (rdma_cm)"
                                           : ""));
  return true;
}

void Engine::list_hosts(Connection& c, std::span<const uint8_t> msg) {
  const std::optional<ListHosts> req = body_as<ListHosts>(msg, MsgType::ListHosts);
  auto r = std::make_unique<HostsReply>();
  r->total = static_cast<uint32_t>(hosts_.size());
  for (std::size_t i = req ? req->first : hosts_.size(); i < hosts_.size() && r->count < kHostsPerReply; ++i)
    std::strncpy(r->names[r->count++], hosts_[i]->name().c_str(), kNodeNameSize - 1);
  post(c, MsgType::HostsReply, r.get(), sizeof *r);
}

void Engine::query_node(Connection& c, std::span<const uint8_t> msg) {
  NodeReply r;
  const fabric::Hca* hca = c.hca;
  if (const std::optional<QueryNodeBody> b = body_as<QueryNodeBody>(msg, MsgType::QueryNode); b && b->node[0])
    hca = fabric_->find_hca(std::string_view(b->node, strnlen(b->node, sizeof b->node)));
  if (!hca) {
    r.status = -ENODEV;
    post(c, MsgType::NodeReply, &r, sizeof r);
    return;
  }
  const fabric::Hca& h = *hca;
  r.node_guid = h.guid();
  r.system_image_guid = h.guid();
  std::strncpy(r.name, h.name().c_str(), sizeof r.name - 1);
  r.num_ports = std::min<uint32_t>(h.num_ports(), kMaxPorts);
  for (uint32_t i = 0; i < r.num_ports; ++i) {
    const fabric::Port& p = h.port(static_cast<uint8_t>(i + 1));
    PortRecord& out = r.ports[i];
    out.number = p.number();
    out.state = static_cast<uint8_t>(p.state());
    out.phys_state = static_cast<uint8_t>(p.phys_state());
    out.lmc = p.lmc;
    out.sm_sl = p.master_sm_sl;
    out.lid = p.lid;
    out.sm_lid = p.master_sm_lid;
    out.rate_mbps = p.link() ? nominal_mbps(p.link()->rate()) : 0;
    if (p.link()) {
      const fabric::LinkRate& rate = p.link()->rate();
      out.active_width = rate.width_bits();
      out.active_speed = rate.speed_ext_bits() ? static_cast<uint8_t>(rate.speed_ext_bits() << 4) : rate.speed_bits();
    }
    out.active_mtu = p.neighbor_mtu;
    out.max_mtu = p.mtu_cap;
    out.capability_mask = p.capability_mask;
    out.gid_prefix = p.gid_prefix;
    out.port_guid = p.guid();
    out.pkey_count = static_cast<uint16_t>(std::min(p.pkeys.size(), kMaxPkeys));
    std::copy_n(p.pkeys.begin(), out.pkey_count, out.pkeys);
  }
  post(c, MsgType::NodeReply, &r, sizeof r);
}

void Engine::register_agent(Connection& c, std::span<const uint8_t> msg) {
  Result r;
  const std::optional<RegisterAgent> req = body_as<RegisterAgent>(msg, MsgType::RegisterAgent);
  Connection* port = nullptr;
  for (auto& [fd, other] : connections_)
    if (req && other->kind == ConnectionKind::MadPort && other->handle == req->handle && other->pid == c.pid) port = other.get();
  if (!req || !port) {
    r.value = -EINVAL;
    post(c, MsgType::RegisterReply, &r, sizeof r);
    return;
  }
  fabric::Hca::AgentSpec spec;
  spec.port = port->port;
  spec.mgmt_class = req->mgmt_class;
  spec.class_version = req->class_version;
  spec.methods = {req->method_mask[0], req->method_mask[1]};
  const auto id = static_cast<uint32_t>(port->agents.size());
  auto agent = std::make_unique<UmadAgent>(*this, *port, id);
  agent->rmpp = req->rmpp_version != 0;
  agent->hca_id = port->hca->register_agent(spec, agent.get());
  if (agent->hca_id == 0) {
    r.value = -EINVAL;
  } else {
    r.value = static_cast<int32_t>(id);
    port->agents.push_back(std::move(agent));
  }
  post(c, MsgType::RegisterReply, &r, sizeof r);
}

void Engine::unregister_agent(Connection& c, std::span<const uint8_t> msg) {
  Result r;
  r.value = -EINVAL;
  if (const std::optional<UnregisterAgent> req = body_as<UnregisterAgent>(msg, MsgType::UnregisterAgent))
    for (auto& [fd, port] : connections_)
      if (port->kind == ConnectionKind::MadPort && port->handle == req->handle && port->pid == c.pid &&
          req->agent < port->agents.size() && port->agents[req->agent]) {
        port->agents[req->agent].reset();
        r.value = 0;
      }
  post(c, MsgType::UnregisterReply, &r, sizeof r);
}

bool Engine::send_mad(Connection& c, std::span<const uint8_t> msg) {
  const std::optional<MadEnvelope> env = body_as<MadEnvelope>(msg, MsgType::SendMad);
  if (!env) return refuse(c, EPROTO, "bad SendMad");
  const std::size_t header = sizeof(MsgHeader) + sizeof(MadEnvelope);
  if (env->length != msg.size() - header) return refuse(c, EINVAL, "a SendMad's length must match");
  const std::span<const uint8_t> part = msg.subspan(header);
  // A message longer than kFragment comes in consecutive fragments.
  if (!c.partial.empty() || env->total > env->length) {
    if (env->total > kMaxSend || c.partial.size() + part.size() > env->total)
      return refuse(c, EINVAL, "fragments do not add up to the message's total");
    if (const std::size_t had = c.partial.capacity(); had < env->total) {  // charged whole from the first fragment
      c.partial.reserve(env->total);
      charge(c, static_cast<std::ptrdiff_t>(c.partial.capacity() - had));
      if (c.broken) return false;  // over the budget, and the client holding the most
    }
    c.partial.insert(c.partial.end(), part.begin(), part.end());
    if (c.partial.size() < env->total) return true;
    charge(c, -static_cast<std::ptrdiff_t>(c.partial.capacity()));
    const std::vector<uint8_t> whole = std::move(c.partial);
    c.partial.clear();
    return send_whole(c, *env, whole);
  }
  return send_whole(c, *env, part);
}

bool Engine::send_whole(Connection& c, const MadEnvelope& env, std::span<const uint8_t> message) {
  if (message.size() < 24) return refuse(c, EINVAL, "a MAD is at least 24 bytes");
  if (env.agent >= c.agents.size() || !c.agents[env.agent]) return refuse(c, EINVAL, "agent not registered on this port");
  if (message.size() > kMaxMad && !(c.agents[env.agent]->rmpp && (message[26] & wire::RmppHeader::kFlagActive)))
    return refuse(c, EINVAL, "a MAD longer than 256 bytes needs an RMPP agent and the RMPP Active flag");
  c.agents[env.agent]->send(env, message);
  return true;
}

bool Engine::refuse(Connection& c, int status, const std::string& why) {
  ErrorBody e;
  e.status = status;
  std::strncpy(e.text, why.c_str(), sizeof e.text - 1);
  post(c, MsgType::Error, &e, sizeof e);
  log(c.who() + " refused: " + why);
  return false;
}

void Engine::close_connection(int fd) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  if (c.greeted && c.kind == ConnectionKind::MadPort)
    log(c.who() + " left " + c.hca->name() + " (MAD port " + std::to_string(c.port) + ", " +
        std::to_string(std::count_if(c.agents.begin(), c.agents.end(), [](const auto& a) { return a != nullptr; })) +
        " agents released)");
  else if (c.greeted && c.hca)
    log(c.who() + " left " + c.hca->name() + (c.verbs ? " (verbs)" : ""));
  if (c.greeted) {
    take_posted_work(c.pid);
    forget(c.pid, c);
  }
  c.agents.clear();
  if (c.verbs) verbs_.close(c.verbs);
  if (c.cm) cm_->close(c.cm);
  held_ -= c.charged;
  ::close(fd);
  connections_.erase(it);
}

}  // namespace ibfab::api

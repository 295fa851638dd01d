#include "tools/passthrough/passthrough_run.h"

#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

#include "tools/passthrough/completion_tally.h"

namespace ibfab::passthrough {
namespace {

using Kind = scenario::Action::Kind;
using Clock = std::chrono::steady_clock;

std::string gid_text(const uint8_t* raw) {
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(AF_INET6, raw, buf, sizeof buf) ? buf : "?";
}

int64_t microseconds_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

}  // namespace

// A group as one host joined it: its address, and what the join event gave.
struct PassthroughRun::Group {
  sockaddr_storage addr{};
  ibv_ah* ah = nullptr;
  uint32_t qpn = 0, qkey = 0;
  ibv_gid dgid{};     // the join event's MGID
  uint16_t mlid = 0;  // and its MLID (0 on RoCE)
};

struct PassthroughRun::HostState {
  std::unique_ptr<RdmaHost> rdma;
  std::map<std::string, Group> groups;  // by the scenario's MGID text; node addresses stay put
  std::size_t reported = 0;             // received messages already listed by an expect step
  ~HostState() {
    for (auto& [mgid, g] : groups)
      if (g.ah) ibv_destroy_ah(g.ah);
  }
};

PassthroughRun::PassthroughRun(const scenario::Scenario& s, const HostMap& map, Family family, std::vector<Step> steps,
                               const std::vector<std::string>& hosts, std::chrono::milliseconds timeout,
                               PeerLink* link)
    : scenario_(s), steps_(std::move(steps)), family_(family), timeout_(timeout), link_(link) {
  // Every receive a host could need at once, within bounds: the waits keep
  // reposting as messages arrive.
  uint64_t sends = 0;
  uint32_t size = 8;
  for (const Step& st : steps_) {
    const scenario::Action& a = *st.action;
    if (a.kind == Kind::Send) {
      sends += a.mcast.count;
      size = std::max(size, a.mcast.size);
    } else if (a.kind == Kind::Connect || a.kind == Kind::Post) {
      uint32_t& largest = largest_post_[std::minmax(a.node, a.conn.to)];
      largest = std::max(largest, a.kind == Kind::Post ? a.conn.size : 0u);
    }
  }
  const auto depth = static_cast<uint32_t>(std::clamp<uint64_t>(sends, 64, 4096));
  for (const std::string& name : hosts) {
    auto h = std::make_unique<HostState>();
    // A QP made again whose old one lives on (its destroy refused) needs
    // receive buffers of its own: one set more per create-qp, up to 3.
    const auto remade = std::count_if(steps_.begin(), steps_.end(), [&](const Step& st) {
      return st.action->kind == Kind::CreateQp && st.action->node == name;
    });
    const auto sets = static_cast<uint32_t>(1 + std::min<std::ptrdiff_t>(remade, 3));
    try {
      h->rdma = std::make_unique<RdmaHost>(name, map.at(name), family, depth, size, sets);
    } catch (const SetupError& e) {
      throw SetupError(name + ": " + e.what());
    }
    hosts_.push_back(std::move(h));
  }
}

PassthroughRun::~PassthroughRun() = default;

PassthroughRun::HostState& PassthroughRun::host(const std::string& name) {
  return **std::find_if(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h->rdma->name() == name; });
}

bool PassthroughRun::local(const std::string& name) const {
  return std::any_of(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h->rdma->name() == name; });
}

namespace {

std::string gid_hex(const ibv_gid& g) {
  std::string out;
  for (const uint8_t b : g.raw) out += hex(b, 2).substr(2);
  return out;
}

bool gid_from_hex(const std::string& text, ibv_gid& g) {
  if (text.size() != 32) return false;
  for (std::size_t i = 0; i < 16; ++i) {
    char* end = nullptr;
    const std::string byte = text.substr(2 * i, 2);
    g.raw[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &end, 16));
    if (*end) return false;
  }
  return true;
}

}  // namespace

RdmaHost::Address PassthroughRun::address_of(const std::string& name) {
  if (local(name)) return host(name).rdma->address();
  std::istringstream in(ask("address " + name));
  RdmaHost::Address a{};
  std::string gid;
  in >> a.lid >> gid >> a.qpn >> a.qkey;
  if (!in || !gid_from_hex(gid, a.gid)) throw SetupError("--link: the peer's address of " + name + " is no address");
  return a;
}

uint32_t PassthroughRun::qpn_of(const std::string& name) {
  if (local(name)) return host(name).rdma->qp_num();
  return static_cast<uint32_t>(std::stoul(ask("qpn " + name)));
}

void PassthroughRun::service_link() {
  while (link_) {
    const std::optional<std::string> line = link_->take_line();
    if (!line) return;
    std::istringstream in(*line);
    std::string kind, what, name;
    in >> kind;
    if (kind == "ask") {
      in >> what >> name;
      if (!local(name)) throw SetupError("--link: the peer asks of " + name + ", which is not this process's");
      if (what == "address") {
        const RdmaHost::Address a = host(name).rdma->address();
        link_->send("answer " + std::to_string(a.lid) + " " + gid_hex(a.gid) + " " + std::to_string(a.qpn) + " " +
                    std::to_string(a.qkey));
      } else {
        link_->send("answer " + std::to_string(host(name).rdma->qp_num()));
      }
    } else if (kind == "answer") {
      answer_ = line->substr(7);
    } else if (kind == "step") {
      std::size_t i = 0;
      in >> i;
      const auto start = line->find('{');
      if (!in || start == std::string::npos) throw SetupError("--link: a step record that is none: " + *line);
      peer_records_[i] = line->substr(start);
    } else {
      throw SetupError("--link: an unknown line from the peer: " + line->substr(0, 80));
    }
  }
}

std::string PassthroughRun::ask(const std::string& what) {
  answer_.reset();
  link_->send("ask " + what);
  if (!wait_until([&] { return answer_.has_value(); }))
    throw SetupError("--link: the peer did not answer 'ask " + what + "' in " + std::to_string(timeout_.count()) + " ms");
  return *answer_;
}

std::string PassthroughRun::peer_record(std::size_t i) {
  // The peer's step takes its own waits: give it as long as several of them.
  const auto limit = 10 * timeout_;
  if (!wait_until([&] { return peer_records_.count(i) != 0; }, limit))
    throw SetupError("--link: the peer sent no record of step " + std::to_string(i) + " in " +
                     std::to_string(limit.count()) + " ms");
  std::string r = std::move(peer_records_[i]);
  peer_records_.erase(i);
  return r;
}

template <class Done>
bool PassthroughRun::wait_until(Done done, std::chrono::milliseconds limit) {
  const Clock::time_point deadline = Clock::now() + (limit.count() ? limit : timeout_);
  std::vector<pollfd> fds;
  for (;;) {
    for (auto& h : hosts_) h->rdma->drain();
    if (link_) service_link();
    if (done()) return true;
    for (auto& h : hosts_) h->rdma->arm();
    for (auto& h : hosts_) h->rdma->drain();
    if (done()) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    fds.clear();
    for (auto& h : hosts_) {
      fds.push_back({h->rdma->completion_fd(), POLLIN, 0});
      fds.push_back({h->rdma->event_fd(), POLLIN, 0});
    }
    if (link_) fds.push_back({link_->fd(), POLLIN, 0});
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) > 0)
      for (std::size_t i = 0; i < hosts_.size(); ++i)
        if (fds[2 * i].revents & POLLIN) hosts_[i]->rdma->take_completion_events();
    if (link_) service_link();
  }
}

JsonObject PassthroughRun::join(HostState& h, const scenario::Action& a, bool& ok) {
  JsonObject out;
  Group& g = h.groups[a.mcast.mgid];
  if (g.ah) {  // joined again: the new event's AH replaces it
    ibv_destroy_ah(g.ah);
    g.ah = nullptr;
  }
  g.addr = group_address(a.mcast.mgid, family_);
  rdma_cm_join_mc_attr_ex attr{};
  attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
  attr.join_flags = a.mcast.join_state == 0x8 ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER : RDMA_MC_JOIN_FLAG_FULLMEMBER;
  attr.addr = reinterpret_cast<sockaddr*>(&g.addr);
  const int rc = rdma_join_multicast_ex(h.rdma->id(), &attr, &g);
  const int err = errno;
  out.add("call", call_outcome(rc, err));
  const bool want_error = a.mcast.expect_status.value_or(0) != 0;
  out.add("expect", want_error ? "RDMA_CM_EVENT_MULTICAST_ERROR" : "RDMA_CM_EVENT_MULTICAST_JOIN");
  if (rc != 0) {
    ok = false;
    return out;
  }
  std::deque<CmEvent>& events = h.rdma->events;
  const auto mine = [&] { return std::find_if(events.begin(), events.end(), [&](const CmEvent& e) { return e.context == &g; }); };
  std::string others = "[";
  JsonObject raw;
  const bool came = wait_until([&] { return mine() != events.end(); });
  std::optional<rdma_cm_event_type> got;
  if (!came) {
    out.add("event", JsonObject().add("type", "none").add("timeout_ms", static_cast<int64_t>(timeout_.count())));
  } else {
    for (auto it = events.begin(); it != mine(); it = events.erase(it))
      others += (others.size() > 1 ? "," : "") + json_string(rdma_event_str(it->type));
    const CmEvent e = *mine();
    events.erase(mine());
    got = e.type;
    JsonObject ev;
    ev.add("type", rdma_event_str(e.type)).add("status", e.status);
    if (e.type == RDMA_CM_EVENT_MULTICAST_JOIN) {
      const ibv_ah_attr& ah = e.ah;
      ev.add("mgid", gid_text(ah.grh.dgid.raw))
          .add("ah", JsonObject()
                         .add("is_global", ah.is_global != 0)
                         .add("dlid_set", ah.dlid != 0)
                         .add("sl", ah.sl)
                         .add("port_num", ah.port_num)
                         .add("hop_limit", ah.grh.hop_limit)
                         .add("traffic_class", ah.grh.traffic_class)
                         .add("flow_label", ah.grh.flow_label))
          .add("qp_num", hex(e.qp_num, 6))
          .add("qkey", hex(e.qkey, 8));
      ibv_ah_attr attr_copy = ah;
      g.ah = ibv_create_ah(h.rdma->pd(), &attr_copy);
      ev.add("create_ah", call_outcome(g.ah ? 0 : -1, errno));
      g.qpn = e.qp_num;
      g.qkey = e.qkey;
      g.dgid = ah.grh.dgid;
      g.mlid = ah.dlid;
      raw.add("dlid", hex(ah.dlid, 4)).add("static_rate", ah.static_rate).add("sgid_index", ah.grh.sgid_index);
    }
    out.add("event", ev);
  }
  out.add_json("other_events", others + "]");
  ok = got == (want_error ? RDMA_CM_EVENT_MULTICAST_ERROR : RDMA_CM_EVENT_MULTICAST_JOIN) &&
       (want_error || g.ah != nullptr);
  return out.add("raw", raw);
}

JsonObject PassthroughRun::leave(HostState& h, const scenario::Action& a, bool& ok) {
  const auto it = h.groups.find(a.mcast.mgid);
  sockaddr_storage addr = group_address(a.mcast.mgid, family_);
  const int rc = rdma_leave_multicast(h.rdma->id(), reinterpret_cast<sockaddr*>(&addr));
  const int err = errno;
  if (it != h.groups.end()) {
    if (it->second.ah) ibv_destroy_ah(it->second.ah);
    h.groups.erase(it);
  }
  ok = rc == 0;
  return JsonObject().add("call", call_outcome(rc, err));
}

// A unicast UD address of `to` as `from` reaches it: its LID, and with
// `grh` a GRH to its GID from `from`'s own.
ibv_ah_attr unicast_address(const RdmaHost& from, const RdmaHost::Address& to, bool grh) {
  ibv_ah_attr ah{};
  ah.dlid = to.lid;
  ah.port_num = from.port();
  ah.is_global = grh;
  if (grh) {
    ah.grh.dgid = to.gid;
    ah.grh.sgid_index = static_cast<uint8_t>(std::max(from.sgid_index(), 0));
    ah.grh.hop_limit = 64;
  }
  return ah;
}

JsonObject PassthroughRun::send(HostState& h, const scenario::Action& a, std::size_t step, bool& ok) {
  JsonObject out;
  RdmaHost& r = *h.rdma;
  ok = false;
  if (!r.qp()) return out.add("error", "the host has no QP");
  ibv_ah* ah = nullptr;
  uint32_t qpn = 0, qkey = 0;
  std::unique_ptr<ibv_ah, int (*)(ibv_ah*)> own_ah(nullptr, ibv_destroy_ah);
  if (a.mcast.to.empty()) {
    const auto it = h.groups.find(a.mcast.mgid);
    if (it == h.groups.end() || !it->second.ah)
      return out.add("error", "the host has no join event (MULTICAST_JOIN) for this group");
    ah = it->second.ah;
    qpn = it->second.qpn;
    qkey = it->second.qkey;
  } else {
    const RdmaHost::Address to = address_of(a.mcast.to);
    ibv_ah_attr attr = unicast_address(r, to, a.mcast.grh);
    own_ah.reset(ibv_create_ah(r.pd(), &attr));
    out.add("create_ah", call_outcome(own_ah ? 0 : -1, errno));
    if (!own_ah) return out;
    ah = own_ah.get();
    qpn = to.qpn;
    qkey = to.qkey;
  }
  const std::size_t base = r.sent.size();
  const Clock::time_point start = Clock::now();
  uint32_t posted = 0;
  int rc = 0, err = 0;
  bool timed_out = false;
  for (uint32_t seq = 0; seq < a.mcast.count && rc == 0 && !timed_out; ++seq) {
    // A send slot is free again once its completion has come.
    if (seq >= RdmaHost::kSendSlots)
      timed_out = !wait_until([&] { return r.sent.size() - base > seq - RdmaHost::kSendSlots; });
    if (timed_out) break;
    rc = r.post_send(ah, qpn, qkey, seq, static_cast<uint32_t>(step), a.mcast.size);
    err = rc;
    if (rc == 0) ++posted;
  }
  if (!timed_out) timed_out = !wait_until([&] { return r.sent.size() - base >= posted; });
  out.add("posted", posted)
      .add("post", call_outcome(rc, err))
      .add_json("completions", completion_tally(r.sent, base, false))
      .add("timed_out", timed_out);
  ok = posted == a.mcast.count && !timed_out && r.sent.size() - base == posted &&
       std::all_of(r.sent.begin() + static_cast<std::ptrdiff_t>(base), r.sent.end(),
                   [](const RdmaHost::Sent& c) { return c.status == IBV_WC_SUCCESS; });
  return out.add("raw", JsonObject().add("elapsed_us", microseconds_since(start)));
}

// The MGID and MLID a host attaches its QP with: those of its join event
// for the group, or before any (MLID 0) the MGID rdma_cm maps the group's
// address to on this link layer.
std::pair<ibv_gid, uint16_t> PassthroughRun::attachment(HostState& h, const scenario::Action& a) const {
  const auto it = h.groups.find(a.mcast.mgid);
  if (it != h.groups.end() && it->second.ah) return {it->second.dgid, it->second.mlid};
  ibv_gid g{};
  const in6_addr mapped = rdma_cm_mgid(group_address(a.mcast.mgid, family_), h.rdma->infiniband());
  std::memcpy(g.raw, mapped.s6_addr, 16);
  return {g, 0};
}

JsonObject PassthroughRun::attach(HostState& h, const scenario::Action& a, bool& ok) {
  JsonObject out;
  ok = false;
  if (!h.rdma->qp()) return out.add("error", "the host has no QP");
  const auto [gid, lid] = attachment(h, a);
  const int rc = a.kind == Kind::Attach ? ibv_attach_mcast(h.rdma->qp(), &gid, lid)
                                        : ibv_detach_mcast(h.rdma->qp(), &gid, lid);
  ok = rc == 0;
  return out.add("mgid", gid_text(gid.raw))
      .add("after_join_event", h.groups.count(a.mcast.mgid) && h.groups.at(a.mcast.mgid).ah)
      .add("call", call_outcome(rc, rc))  // verbs returns the errno value itself
      .add("raw", JsonObject().add("mlid", hex(lid, 4)));
}

JsonObject PassthroughRun::qp_state(HostState& h, const scenario::Action& a, bool& ok) {
  static constexpr ibv_qp_state kState[] = {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_ERR};
  const int rc = h.rdma->modify_state(kState[static_cast<int>(a.qp_state)]);
  ok = rc == 0;
  return JsonObject().add("call", call_outcome(rc, rc));  // ibv_modify_qp returns the errno value
}

JsonObject PassthroughRun::create_qp(HostState& h, const scenario::Action& a, bool& ok) {
  JsonObject out;
  const uint32_t flags = a.block_self_mcast_lb ? IBV_QP_CREATE_BLOCK_SELF_MCAST_LB : 0;
  const int destroyed = h.rdma->destroy_qp();
  out.add("destroy", call_outcome(destroyed, destroyed));  // verbs returns the errno value
  const int err = h.rdma->make_qp(flags);
  out.add("call", call_outcome(err ? -1 : 0, err));
  ok = err == 0;
  // A device that refuses the flags gets the plain QP an application
  // would fall back to, so that the steps after still compare.
  if (err && flags) {
    const int plain = h.rdma->make_qp(0);
    out.add("fallback", call_outcome(plain ? -1 : 0, plain));
  }
  return out;
}

JsonObject PassthroughRun::expect_received(HostState& h, const scenario::Action& a, bool& ok) {
  RdmaHost& r = *h.rdma;
  const uint64_t want = *a.expect.received;
  // Messages are the successful receive completions; flushed receives are
  // listed with their status but are no message.
  const bool reached = wait_until([&] { return r.delivered >= want; });
  if (reached) wait_until([] { return false; }, kQuiet);
  std::string list = "[";
  std::map<std::string, uint32_t> sender_qpn;  // by sending host
  for (std::size_t i = h.reported; i < r.received.size(); ++i) {
    const Received& m = r.received[i];
    const bool known_step = m.step && *m.step < steps_.size() && steps_[*m.step].action->kind == Kind::Send;
    const std::string from = known_step ? steps_[*m.step].action->node : "";
    JsonObject o;
    if (known_step) o.add("from", from).add("step", *m.step);
    else o.add_null("from").add_null("step");
    if (m.seq) o.add("seq", *m.seq);
    else o.add_null("seq");
    o.add("status", ibv_wc_status_str(m.status));
    if (m.status != IBV_WC_SUCCESS) {  // the other fields of a failed completion are undefined
      o.add_null("opcode").add_null("byte_len").add_null("grh").add_null("imm").add_null("src_qp_is_sender")
          .add_null("intact");
    } else {
      o.add("opcode", wc_opcode_name(m.opcode)).add("byte_len", m.byte_len).add("grh", m.grh);
      if (m.imm) o.add("imm", hex(*m.imm, 8));
      else o.add_null("imm");
      if (known_step && !sender_qpn.count(from)) sender_qpn[from] = qpn_of(from);  // asked once a step
      o.add("src_qp_is_sender", known_step && m.src_qp == sender_qpn[from]).add("intact", m.intact);
    }
    list += (list.size() > 1 ? "," : "") + o.str();
  }
  h.reported = r.received.size();
  ok = r.delivered == want;
  return JsonObject()
      .add("expect", want)
      .add("received", r.delivered)
      .add("timed_out", !reached)
      .add_json("messages", list + "]");
}

JsonObject PassthroughRun::connection(const scenario::Action& a, std::size_t step, bool& ok) {
  const Pair pair = std::minmax(a.node, a.conn.to);
  std::unique_ptr<RcConnection>& c = connections_[pair];
  if (a.kind == Kind::Connect && !a.conn.listen) {  // refused: the pair keeps what it had
    RcConnection refused(*host(a.node).rdma, *host(a.conn.to).rdma, 8, timeout_);
    return refused.connect(ok, false);
  }
  if (a.kind == Kind::Connect) {
    c.reset();  // a connection made again: the old one's ids and QPs go first
    c = std::make_unique<RcConnection>(*host(a.node).rdma, *host(a.conn.to).rdma, largest_post_[pair], timeout_);
    return c->connect(ok);
  }
  if (a.kind == Kind::Post) return c->post(a.node, a.conn, static_cast<uint32_t>(step), ok);
  return c->disconnect(a.node, ok);
}

int PassthroughRun::run(std::ostream& out) {
  int failed = 0;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const scenario::Action& a = *steps_[i].action;
    const std::string& name = a.kind == Kind::Expect ? a.expect.node : a.node;
    if (!local(name)) {  // the peer's step: its record, as it ran it
      const std::string line = peer_record(i);
      failed += line.ends_with("\"ok\":true}") ? 0 : 1;
      out << line << '\n' << std::flush;
      continue;
    }
    HostState& h = host(name);
    JsonObject rec;
    rec.add("step", static_cast<uint64_t>(i)).add("at", steps_[i].at.str()).add("line", a.line).add("host", name)
        .add("action", scenario::to_string(a.kind));
    bool ok = false;
    switch (a.kind) {
      case Kind::Join:
        rec.add("mgid", a.mcast.mgid).add("join_state", join_state_name(a.mcast.join_state));
        rec.add("outcome", join(h, a, ok));
        break;
      case Kind::Leave:
        rec.add("mgid", a.mcast.mgid).add("join_state", join_state_name(a.mcast.join_state));
        rec.add("outcome", leave(h, a, ok));
        break;
      case Kind::Send:
        if (a.mcast.to.empty()) rec.add("mgid", a.mcast.mgid);
        else rec.add("to", a.mcast.to).add("grh", a.mcast.grh);
        rec.add("count", a.mcast.count).add("size", a.mcast.size);
        rec.add("outcome", send(h, a, i, ok));
        break;
      case Kind::Attach:
      case Kind::Detach:
        rec.add("mgid", a.mcast.mgid);
        rec.add("outcome", attach(h, a, ok));
        break;
      case Kind::QpState:
        rec.add("state", scenario::to_string(a.qp_state));
        rec.add("outcome", qp_state(h, a, ok));
        break;
      case Kind::CreateQp:
        rec.add("block_self_mcast_lb", a.block_self_mcast_lb);
        rec.add("outcome", create_qp(h, a, ok));
        break;
      case Kind::Connect:
      case Kind::Disconnect:
        rec.add("to", a.conn.to);
        if (a.kind == Kind::Connect && !a.conn.listen) rec.add("listen", false);
        rec.add("outcome", connection(a, i, ok));
        break;
      case Kind::Post:
        rec.add("to", a.conn.to).add("op", scenario::to_string(a.conn.op)).add("count", a.conn.count)
            .add("size", a.conn.size);
        if (a.conn.op == scenario::ConnSpec::Op::SendImm || a.conn.op == scenario::ConnSpec::Op::WriteImm)
          rec.add("imm", hex(a.conn.imm, 8));
        rec.add("outcome", connection(a, i, ok));
        break;
      default:
        rec.add("outcome", expect_received(h, a, ok));
        break;
    }
    rec.add("ok", ok);
    failed += ok ? 0 : 1;
    if (link_) link_->send("step " + std::to_string(i) + " " + rec.str());
    out << rec.str() << '\n' << std::flush;
  }
  out << JsonObject()
             .add("summary", JsonObject().add("scenario", scenario_.name).add("steps", static_cast<uint64_t>(steps_.size()))
                                 .add("failed", failed))
             .str()
      << '\n' << std::flush;
  return failed;
}

}  // namespace ibfab::passthrough

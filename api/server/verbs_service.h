#pragma once
// The engine's side of libibverbs: the objects each verbs connection
// created (completion channels, CQs, QPs, PDs, MRs and windows;
// verbs_protocol.h) and the shared-memory data path (verbs_rings.h). A UD
// QP is a fabric UD QP on the connection's HCA whose endpoint fills the
// client's receive ring; an RC or UC QP is a connected QP of the HCA model,
// whose DMA reaches the client's registered memory (verbs_memory.h). Posted
// work is taken from the client's rings by run_rings(). The objects are in
// files of their own: a connection's (verbs_context.h), CQs and channels
// (verbs_cq.h), UD QPs (verbs_ud_qp.h), RC and UC QPs
// (verbs_connected_qp.h), SRQs (verbs_srq.h).
//
// What the hardware would report is reported the same way: completions
// with an error status (and the QP in the error state, its outstanding
// work flushed), a CQ overrun as IBV_EVENT_CQ_ERR, port changes as async
// events. A client's shared memory is never trusted: indices and lengths
// are checked against what the engine itself sized.
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/server/ring_scan.h"
#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "api/client/shared_memory.h"
#include "api/server/xrc_domains.h"
#include "fabric/model/hca.h"

namespace ibfab::api {

class VerbsContext;

class VerbsService {
 public:
  VerbsService();
  ~VerbsService();
  VerbsService(const VerbsService&) = delete;
  VerbsService& operator=(const VerbsService&) = delete;

  // A context for a verbs connection on `hca` from process `pid` (whose
  // memory its registrations name: the pid the kernel reported for the
  // connection); async events go to `async_fd` (owned from now on).
  VerbsContext* open(fabric::Hca& hca, int async_fd, pid_t pid = ::getpid());
  // Releases everything the context created: QPs destroyed (and so
  // detached from their groups), CQs and channels closed.
  void close(VerbsContext* context);

  // Handles one request of a verbs connection; returns the reply value
  // (>= 0) or -errno. `fds` holds what came with it; what is used is taken.
  int64_t handle(VerbsContext& context, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds);

  // Takes the work clients posted (sends, and flushes of QPs in error);
  // true if there was any.
  bool run_rings();
  // The same for one context's QPs, taking only the sends posted before
  // `limit` (program_clock_ns; 0: receives and flushes only).
  bool run_rings(VerbsContext& context, uint64_t limit = UINT64_MAX);
  // The same before one of the context's process's requests acts (its
  // program order): nothing to do, without looking at its QPs, while no
  // client has posted since the context's last such walk left nothing.
  bool take_posted(VerbsContext& context, uint64_t limit);
  // Whether the context has sends posted and not yet taken.
  bool posted(const VerbsContext& context) const;
  // A context whose rings its caller takes (run_rings(context, limit), in
  // program order with the process's other channels): run_rings() then
  // only reports that it has work.
  void set_ordered_by_caller(VerbsContext& context, bool on);

  // The doorbell clients write when the engine sleeps, and the page that
  // says so; handed to each verbs connection in its HelloReply.
  int doorbell_fd() const { return doorbell_; }
  int page_fd() const { return page_.fd(); }
  // Before waiting: marks the engine asleep (yielding: leaving its work to
  // its own process's posting and polling threads, EnginePage::kYielding),
  // then looks at the rings once more; false (and awake again) if work
  // arrived meanwhile.
  bool prepare_to_sleep(bool yielding = false);
  // After waiting: awake, doorbell drained.
  void woke();
  bool has_qps() const { return !qps_.empty() || !connected_.empty() || !srqs_.empty(); }
  // Where the service says what it refused a client and why (ibfab
  // serve's log); nothing is said until it is set.
  void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }
  void log(const std::string& text) const {
    if (log_) log_(text);
  }

  // How long a UD message that finds no receive posted waits for one (wall
  // time) before it is dropped; 0: dropped at once, as hardware does. The
  // grace lets a receiving process that has not been scheduled yet catch up
  // on a machine with fewer cores than busy processes.
  void set_rx_grace_ns(int64_t ns) { rx_grace_ns_ = ns; }
  int64_t rx_grace_ns() const { return rx_grace_ns_; }
  // Messages dropped after waiting out the grace, per HCA.
  void count_late_drops(const fabric::Hca& hca, std::size_t n);
  uint64_t late_drops(const fabric::Hca& hca) const;

  class Qp;
  class ConnectedQp;
  class SharedRq;
  class Cq;

 private:
  // run_rings() over the active objects and a slice of the others
  // (ring_scan.h), or over every one.
  bool scan(bool all);
  int doorbell_ = -1;
  SharedMemory page_;
  int64_t rx_grace_ns_ = 0;
  std::unordered_map<const fabric::Hca*, uint64_t> late_drops_;
  std::vector<std::unique_ptr<VerbsContext>> contexts_;
  // Every context's UD QPs, RC and UC QPs, and SRQs, scanned by run_rings().
  RingScan<Qp> qps_;
  RingScan<ConnectedQp> connected_;
  RingScan<SharedRq> srqs_;
  std::function<void(const std::string&)> log_;
  XrcDomains xrc_domains_;  // every HCA's XRC domains, shared by the contexts on it
  friend class VerbsContext;
};

}  // namespace ibfab::api

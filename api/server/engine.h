#pragma once
// The engine behind `ibfab serve` and the in-process transport: it owns one
// fabric (and, unless told otherwise, a built-in SM on the first host),
// runs its simulator, and serves client processes over a listening
// SOCK_SEQPACKET socket (protocol.h).
//
// Time: bursts of activity run as fast as the events allow; virtual time
// never runs more than `lookahead` ahead of a clock that follows wall time
// from the moment serving starts, so periodic work (the SM's light sweeps,
// umad timeouts) keeps wall-clock pace while a MAD round trip takes no wall
// time beyond the work itself. Virtual time may not race ahead while a
// client waits: the answer may come from another process (OpenSM's SA),
// which needs wall time, and the request would time out first.
//
// Output: a message the client's socket cannot take now is queued and sent
// when the socket is writable; nothing is dropped. A request/reply
// connection (control, verbs, CM) with a reply queued is not read until
// the client has taken it: a client that sends without reading is simply
// no longer served, at no cost to the engine.
//
// Fairness and bounds (docs/ARCHITECTURE.md): each round reads at most
// kReadsPerRound messages from a connection and takes at most
// kMadsPerRound MADs of a process (in program order; the rest waits for
// the next round), and accepts at most kAcceptsPerRound connections. The
// output queued for all clients, the fragments of their unfinished
// SendMads, and their rdma_cm ids, channels and events not yet taken share
// one budget, kHeldBudget: when they come to more, the
// client holding the most is disconnected, and the log says so. More than
// EngineOptions::max_clients connections at once are refused with an Error
// (EUSERS), as are connections the engine has no file descriptor for
// (EMFILE, through a reserve descriptor); the engine goes on serving the
// others either way and never spins on a listening socket it cannot
// accept from.
//
// Clients: each connection is a control session, a MAD port, a verbs
// context or a connection manager (protocol.h). Verbs work posted in shared memory is taken every
// round; while there is any the engine does not sleep, and when it does,
// a client's doorbell wakes it (verbs_rings.h). When its thread is
// descheduled while it spins, it yields instead, and the threads of its
// own process (the in-process transport) move the work themselves when
// they post and poll (drive()). A MAD port's agents are registered on its host's HCA as
// fabric::MadAgents; what they receive goes to the port's socket. Closing
// a connection (a client that exits or is killed) unregisters its agents.
// A client that sends anything malformed gets an Error and is dropped; the
// engine and every other client go on.
#include <poll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "api/server/cm_service.h"
#include "api/server/fault_schedule.h"
#include "api/server/verbs_service.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/address_plan.h"
#include "fabric/topology/topology.h"
#include "fabric/wire/pcap_writer.h"
#include "sim/simulator.h"
#include "sm/subnet_manager.h"

namespace ibfab::api {

struct EngineOptions {
  std::string topology;           // a topology spec (fabric/topology/topology_spec.h)
  bool builtin_sm = true;         // run the built-in SM on `sm_node`
  std::string sm_node;            // default: the first host
  sim::Time lookahead = sim::Time::ms(50);
  std::size_t max_clients = 4096; // connections at once; more are refused (EUSERS)
  std::string pcap;               // capture every packet on every link here (ERF records; "" = none)
  int64_t rx_grace_us = 10000;    // VerbsService::set_rx_grace_ns (0: hardware's drop at once)
  topo::AddressOptions addresses; // the ports' IP addresses and the hosts' routes (rdma_cm)
  bool every_host_local = false;  // rdma_cm: any host's address is local to every client (embedded)
  // Where the model build, the bring-up and the IPoIB joins report how far
  // they are (sim/progress.h; not owned; null: nowhere).
  sim::Progress* progress = nullptr;
  bool sa_send_only_full = true;  // the built-in SA understands JoinState 0x8 (sm::McastOptions)
  std::string partitions;         // the built-in SM's partitions.conf ("" = OpenSM's default partition)
  std::string routing = "minhop";  // the built-in SM's routing engine (sm::routing_engine_names)
  std::function<void(const std::string&)> log;  // one line per client event; may be empty
  // Link faults applied at their offsets from the moment serving starts
  // (fault_schedule.h); the constructor throws std::invalid_argument for one
  // naming no cable of the topology.
  std::vector<Fault> faults;
};

class Engine {
 public:
  // Throws std::invalid_argument for a bad topology spec, SM node or fault, and
  // std::runtime_error when the capture file cannot be written.
  explicit Engine(EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs the simulator until the built-in SM's subnet is up (or at once
  // without one). Returns "" or what went wrong.
  std::string bring_up();
  // Serves clients on `listen_fd` (a bound, listening SOCK_SEQPACKET
  // socket) until `stop` becomes true; checks it at least every 100 ms and
  // whenever a signal interrupts the wait.
  void serve(int listen_fd, const std::atomic<bool>& stop);
  // One round of serve(): runs the events due, waits up to `max_wait_ms`
  // for input (less when events are due), accepts on `listen_fd` (if >= 0)
  // and handles what arrived. For the in-process transport, tests and
  // fuzzing.
  void serve_once(int listen_fd, int max_wait_ms);
  // Serves `fd` (a connected SOCK_SEQPACKET socket, now owned by the
  // engine) as if it had been accepted.
  void adopt(int fd);

  // Progress by the caller (the in-process transport): another thread of
  // the engine's process, one that posts or polls while the engine's
  // thread waits for input, runs one round of the verbs work and the
  // events due itself, as a hardware HCA moves messages without a core of
  // its host. Rounds (serve_once's and these) hold one lock; drive() never
  // waits for it. kBusy: the engine was in a round, nothing done. kDone:
  // the round ran and a waiting engine thread need not wake before it
  // planned to. kWake: the round ran and left the engine's thread work
  // for sooner (events due earlier, output queued, MADs left): ring its
  // doorbell.
  enum class Drive { kBusy, kDone, kWake };
  Drive drive();

  // One line per host whose HCA dropped UD messages because no receive was
  // posted (UD has no flow control: a receiver that falls behind loses
  // messages, as on hardware); empty if none did.
  std::vector<std::string> ud_drops() const;

  fabric::Fabric& fabric() { return *fabric_; }
  sim::Simulator& sim() { return sim_; }
  sm::SubnetManager* sm() { return sm_.get(); }
  const topo::AddressPlan& addresses() const { return addresses_; }
  const topo::Topology& topology() const { return topology_; }
  std::size_t clients() const { return connections_.size(); }

 private:
  struct Connection;
  class UmadAgent;

  // Accepts up to kAcceptsPerRound waiting connections; those over the
  // limit, or that the engine has no descriptor for, are turned away.
  void accept_clients(int listen_fd);
  static constexpr int kAcceptsPerRound = 64;
  // Sends `fd` an Error (`status`, `why`) and closes it; logs it, at most
  // a line a second.
  void turn_away(int fd, int status, const std::string& why);
  int reserve_fd_ = -1;                // closed to accept a connection when out of descriptors
  int64_t listen_paused_until_ns_ = 0; // accept failed for want of resources: wait until then
  int64_t refusals_logged_ns_ = 0;     // when turn_away (or a failed accept) last logged
  uint64_t refusals_unlogged_ = 0;     // turned away since
  // Reads and handles up to kReadsPerRound messages queued on `c` (a MAD
  // port: takes up to kMadsPerRound of its process's MADs); false when
  // the connection is to be closed.
  bool read_from(Connection& c);
  static constexpr int kReadsPerRound = 32;
  static constexpr std::size_t kMadsPerRound = 16;
  // Whether `c` is read while output waits for it: only a MAD port, whose
  // output is not answers to what it sends.
  static bool reads_while_queued(const Connection& c);
  bool handle(Connection& c, std::span<const uint8_t> msg, ReceivedFds& fds);
  // Program order across channels (docs/ARCHITECTURE.md): takes what
  // process `pid` did until now through its rings and its MAD ports, in
  // the order it did it: each MAD waiting on a MAD port after the posts
  // stamped before it, oldest MAD first, then the posts. Called before
  // the engine acts on anything else the process sent (a request, its
  // going away), and to read its MAD ports. With `max_mads`, it stops
  // before the MAD after that many (and the posts stamped after it) and
  // leaves the process for the next round.
  void take_posted_work(uint32_t pid, std::size_t max_mads = SIZE_MAX);
  static constexpr int kOrderPasses = 16;
  std::vector<uint32_t> unsettled_;  // processes with MADs left for the next round
  // Reads the next message waiting on MAD port `c` into its `held`
  // buffer; false if there is none (or the connection broke).
  bool hold_next(Connection& c);
  // Takes the ring work of every process: up to now, and in program order
  // for the processes that also have MAD ports; true if there was any.
  bool run_rings();
  bool hello(Connection& c, std::span<const uint8_t> msg, ReceivedFds& fds);
  void query_node(Connection& c, std::span<const uint8_t> msg);
  void list_hosts(Connection& c, std::span<const uint8_t> msg);
  void register_agent(Connection& c, std::span<const uint8_t> msg);
  void unregister_agent(Connection& c, std::span<const uint8_t> msg);
  bool send_mad(Connection& c, std::span<const uint8_t> msg);
  bool send_whole(Connection& c, const MadEnvelope& env, std::span<const uint8_t> message);
  static constexpr std::size_t kMaxSend = 16u << 20;  // the longest message a client may send
  bool refuse(Connection& c, int status, const std::string& why);
  // Sends a message to `c`, or queues it while the socket is full.
  void post(Connection& c, MsgType type, const void* body, std::size_t size, std::span<const uint8_t> tail = {});
  // Sends what is queued for `c`; false when the connection broke.
  bool flush(Connection& c);
  // Adds `bytes` (< 0: gives back) to what `c` holds of the budget; over
  // it, the client holding the most is dropped.
  void charge(Connection& c, std::ptrdiff_t bytes);
  // Charges each CM connection what its ids, channels and unread events
  // hold now (CmService::held), when that has changed.
  void charge_cm();
  // Drops the client holding the most of the budget (`first` among equals):
  // frees what it holds, marks it broken (serve_once closes it), logs it.
  void shed(Connection& first);
  static constexpr std::size_t kHeldBudget = 64u << 20;
  std::size_t held_ = 0;  // what all connections hold: queued output, partial SendMads, rdma_cm state
  void close_connection(int fd);
  // Runs the events due by the paced clock; returns how long poll may wait (ms).
  int advance();
  void log(const std::string& line) const;

  EngineOptions options_;
  sim::Simulator sim_;
  topo::Topology topology_;
  wire::PcapWriter pcap_;  // outlives fabric_, which writes to it
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<sm::SubnetManager> sm_;
  topo::AddressPlan addresses_;
  std::unique_ptr<CmService> cm_;                           // rdma_cm: ids, IPoIB, joins, SIDR
  std::unique_ptr<FaultSchedule> faults_;                   // scheduled when serving starts
  std::map<int, std::unique_ptr<Connection>> connections_;  // by fd
  VerbsService verbs_;                                      // the verbs connections' objects and rings
  std::vector<fabric::Hca*> hosts_;                         // in topology order (ListHosts)
  std::vector<pollfd> pollfds_;                             // serve_once's poll set
  uint32_t next_handle_ = 1;
  sim::Time clock_base_;                   // virtual time when serving started
  int64_t wall_base_ns_ = 0;
  bool serving_ = false;                   // clock_base_ and wall_base_ns_ are set
  // What each client process has open that program order spans.
  struct Process {
    std::vector<VerbsContext*> verbs;     // its verbs connections' objects
    std::vector<Connection*> mad_ports;   // its MAD port connections
  };
  Process& process(uint32_t pid) { return processes_[pid]; }
  // A process with MAD ports has its rings taken by take_posted_work, in
  // program order with its MADs (it is in ordered_); the others' by
  // VerbsService::run_rings.
  void order(uint32_t pid);
  std::vector<uint32_t> ordered_;  // processes with both verbs and MAD ports
  void forget(uint32_t pid, const Connection& c);  // `c` goes: its part of the process too
  void count_verbs_clients();  // sets spin_
  std::map<uint32_t, Process> processes_;  // by the pid of their Hello
  // Spinning: verbs work keeps the engine awake for kSpinNs, but only while
  // each process using verbs (and the engine's) can have a core of its own
  // (spin_), and spinning is of use. It is not when, between two rounds
  // that look at the sockets (kSocketRounds apart), the wall time exceeds
  // the thread's CPU time by more than kDescheduledNs (the thread was
  // descheduled: another wanted the core), nor when kWastedSpins spins
  // within kWastedWindowNs ended without work (the clients were not
  // running to post any: spinning took their core). The engine then
  // yields: it does not spin for kYieldNs. On cores too few, spinning
  // would only take them from busy-polling clients, which drive() the work
  // themselves in the meantime.
  bool spin_ = false;
  static constexpr int64_t kSpinNs = 100'000;
  static constexpr uint32_t kSocketRounds = 16; // rounds between socket polls while it does
  static constexpr int64_t kDescheduledNs = 50'000;
  static constexpr int64_t kYieldNs = 100'000'000;
  int64_t last_verbs_work_ns_ = 0;
  uint32_t spin_rounds_ = 0;
  static constexpr int kWastedSpins = 4;
  static constexpr int64_t kWastedWindowNs = 10'000'000;
  int wasted_spins_ = 0;             // spins that ended without work, since
  int64_t wasted_spins_since_ns_ = 0;
  int64_t spin_mark_wall_ns_ = -1;  // the last socket round while spinning (-1: not spinning since)
  int64_t spin_mark_cpu_ns_ = 0;    // the thread's CPU time then
  int64_t descheduled_ns_ = INT64_MIN / 2;  // when a spinning round last found it had been descheduled
  // One round at a time: serve_once's (but its wait for input) and drive()'s.
  std::mutex round_mu_;
  int64_t sleep_until_ns_ = 0;   // while the engine's thread waits: when it planned to wake
  bool wake_engine_ = false;     // a round left work for serve_once (queued output, a broken connection)
};

}  // namespace ibfab::api

#pragma once
// The Subnet Administrator: a MAD agent for class 0x03 version 2 on the
// SM's HCA port (QP1), answering as OpenSM does (SA-MULTICAST.md 3, 6, 7).
//
// Gate, in order (OpenSM 3.3.23's osm_sa_mad_ctrl.c): only while serving
// (the SM is master and has swept); SM_Key other than 0 and the SA key ->
// silent drop; a requester LID the SM does not know -> no reply; an
// attribute OpenSM's SA does not dispatch (TraceRecord among them) ->
// silent drop; a known attribute with a method it does not take -> 0x000C
// (ClassPortInfo: 0x0200). The agent takes Get, Set, GetTable, Delete and
// GetMulti, as OpenSM registers them; GetTraceTable is not taken (the HCA's
// MAD layer then answers nothing, as the kernel does for a method no agent
// registered other than Get and Set).
//
// Each attribute's query logic is a pure function or table of its own
// (path_records.h, node_records.h, port_info_records.h, link_records.h,
// switch_records.h, port_table_records.h, qos_table_records.h,
// multi_path_records.h, sm_info_records.h,
// service_table.h, inform_table.h, mcast_groups.h); this class dispatches.
// Answered: MCMemberRecord (Set -> 0x81, Delete -> 0x95, Get, GetTable),
// ServiceRecord (Set, Delete, Get, GetTable), InformInfo (Set),
// ClassPortInfo (Get), and Get/GetTable of PathRecord, NodeRecord,
// PortInfoRecord, LinkRecord, SwitchInfoRecord, LinearForwardingTableRecord,
// MulticastForwardingTableRecord, P_KeyTableRecord (trusted requests only,
// else 0x0200), GuidInfoRecord, SMInfoRecord, InformInfoRecord,
// SLtoVLMappingTableRecord and VLArbitrationTableRecord; GetMulti of
// MultiPathRecord (its request comes by RMPP; the answer is PathRecords). Get with
// no record -> 0x0300, with more than one -> 0x0400; GetTable always
// answers through RMPP (rmpp_sender.h), with AttributeOffset 0 when there
// is no record. Errors echo the request with the status set. Reports for
// traps 64..67 go to matching InformInfo subscribers, TIDs from 0x02DAB000,
// resent every `report_timeout` until a ReportResp (0x86) with the same TID
// arrives, at most `report_retries` times.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "fabric/mad/sa/path_record.h"
#include "fabric/model/hca.h"
#include "fabric/wire/gid.h"
#include "sim/simulator.h"
#include "sm/sa/inform_table.h"
#include "sm/sa/mcast_groups.h"
#include "sm/sa/mft_view.h"
#include "sm/sa/rmpp_sender.h"
#include "sm/sa/service_table.h"
#include "sm/subnet.h"

namespace ibfab::sm {

struct SaOptions {
  uint64_t sa_key = 1;  // OpenSM's sa_key: the one non-zero SM_Key accepted
  sim::Time report_timeout = sim::Time::ms(200);
  uint32_t report_retries = 3;
  RmppSender::Options rmpp;
  uint8_t path_packet_life = 0x12;  // OpenSM's default packet_life_time
};

struct SaMetrics {
  uint64_t mads_received = 0;  // every MAD handed to the agent
  uint64_t mads_sent = 0;      // responses, RMPP segments, Reports (resends included)
  uint64_t dropped = 0;        // requests dropped by the gate
  uint64_t joins = 0;          // successful MCMemberRecord Sets
  uint64_t leaves = 0;         // successful MCMemberRecord Deletes
  uint64_t reports_sent = 0, reports_resent = 0, reports_acked = 0, reports_abandoned = 0;
  std::map<uint16_t, uint64_t> by_status;  // answers per status (GetTable included)
};

class SaAgent : public fabric::MadAgent {
 public:
  static constexpr uint32_t kFirstReportTid = 0x02DAB000;

  // Registers on hca:port for class 0x03 version 2 (Get, Set, GetTable,
  // Delete, GetMulti); throws std::runtime_error if another
  // agent has them. Installs itself as `groups.on_trap`. The HCA, subnet
  // and groups must outlive the agent.
  SaAgent(fabric::Hca& hca, uint8_t port, const Subnet& subnet, McastGroups& groups,
          SaOptions options = {});
  ~SaAgent() override;
  SaAgent(const SaAgent&) = delete;
  SaAgent& operator=(const SaAgent&) = delete;

  // The SM is master and its sweep is done (true), or not (false: every
  // request is dropped). Turning it on creates missing well-known groups.
  void set_serving(bool on);
  // Where MulticastForwardingTableRecords come from (none: no record).
  // Must outlive the agent.
  void set_mft_view(const MftView* mfts) { mfts_ = mfts; }
  bool serving() const { return serving_; }

  void on_mad(fabric::Port& port, const fabric::MadAddress& from,
              std::span<const uint8_t> mad) override;
  // The same as a MAD arriving from `from` (tests and fuzzing).
  void handle(const fabric::MadAddress& from, std::span<const uint8_t> mad);

  // Sends trap `trap` (64..67) as a Report to every matching subscriber;
  // `gid` goes in DataDetails; `group_pkey` (66/67) limits it to
  // subscribers holding that P_Key.
  void report(uint16_t trap, const wire::Gid& gid, std::optional<uint16_t> group_pkey);
  // A port left the subnet: its subscriptions go (its groups are the
  // McastGroups' business: McastGroups::drop_port).
  void drop_port(uint64_t port_guid) { informs_.drop_port(port_guid); }

  const SaMetrics& metrics() const { return metrics_; }
  const InformTable& informs() const { return informs_; }
  ServiceTable& services() { return services_; }
  const RmppSender& rmpp() const { return rmpp_; }
  std::size_t reports_pending() const { return reports_.size(); }
  uint32_t agent_id() const { return id_; }

 private:
  using Mad = std::array<uint8_t, 256>;
  struct PendingReport {
    fabric::MadAddress to;
    Mad mad;
    uint32_t tries = 0;
    sim::EventHandle timer;
  };
  void send(const fabric::MadAddress& to, std::span<const uint8_t> mad);
  void reply(const fabric::MadAddress& to, std::span<const uint8_t> req, uint16_t status,
             std::span<const uint8_t> record = {}, uint16_t attr_offset = 0);
  // Answers a Get or GetTable of record type R with what `find(request
  // record, component mask, out)` puts in `out`; other methods get 0x000C.
  template <class R, class Find>
  void answer_query(const fabric::MadAddress& from, std::span<const uint8_t> mad, Find find);
  // Appends `r`, packed and padded to its AttributeOffset, to records_.
  template <class R>
  void add_record(const R& r);
  // Answers a Get or GetTable with the records in records_.
  // `attribute`: the answer's AttributeID when it is not the request's.
  void reply_records(const fabric::MadAddress& to, std::span<const uint8_t> req,
                     uint16_t attr_offset, std::optional<uint16_t> attribute = std::nullopt);
  // ACKs a single-segment RMPP request (segment 1, NewWindowLast 1).
  void ack_request(const fabric::MadAddress& to, std::span<const uint8_t> req);
  void multi_path(const fabric::MadAddress& from, std::span<const uint8_t> mad, uint32_t requester);
  void request(const fabric::MadAddress& from, std::span<const uint8_t> mad);
  void mcmember(const fabric::MadAddress& from, std::span<const uint8_t> mad, uint32_t requester,
                bool trusted);
  void inform_info(const fabric::MadAddress& from, std::span<const uint8_t> mad,
                   uint32_t requester, bool trusted);
  void service(const fabric::MadAddress& from, std::span<const uint8_t> mad, uint32_t requester);
  void report_resp(std::span<const uint8_t> mad);
  void report_timeout(uint32_t tid);
  void drop() { ++metrics_.dropped; }

  fabric::Hca* hca_;
  sim::Simulator* sim_;
  const Subnet* subnet_;
  McastGroups* groups_;
  SaOptions options_;
  uint32_t id_ = 0;
  bool serving_ = false;
  const MftView* mfts_ = nullptr;
  InformTable informs_;
  ServiceTable services_;
  RmppSender rmpp_;
  std::map<uint32_t, PendingReport> reports_;  // by TID low 32 bits
  uint32_t next_report_tid_ = kFirstReportTid;
  SaMetrics metrics_;
  // Scratch kept across requests, so that answering allocates only while
  // they grow: the PathRecords found, and the packed records of an answer.
  std::vector<mad::PathRecord> paths_;
  std::vector<uint8_t> records_;
};

}  // namespace ibfab::sm

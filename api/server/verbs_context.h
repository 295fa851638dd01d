#pragma once
// The objects one verbs connection created (completion channels, CQs, QPs,
// SRQs; its PDs, MRs and windows in VerbsMemory), by the handles and QP
// numbers the client names them with, and the requests that create,
// change and destroy them. Its async events go to the connection's async
// socket.
#include <infiniband/verbs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "api/client/verbs_protocol.h"
#include "api/server/verbs_connected_qp.h"
#include "api/server/verbs_cq.h"
#include "api/server/verbs_memory.h"
#include "api/server/verbs_service.h"
#include "api/server/verbs_srq.h"
#include "api/server/verbs_ud_qp.h"
#include "fabric/model/hca.h"

namespace ibfab::api {

class VerbsContext final : public fabric::PortEventListener {
 public:
  VerbsContext(VerbsService& service, fabric::Hca& hca, int async_fd, pid_t pid)
      : service_(service), hca_(hca), async_fd_(async_fd),
        memory_(hca, pid, [&service](const std::string& why) { service.log(why); }) {
    hca_.add_listener(this);
  }
  ~VerbsContext() override {
    for (auto& [qpn, qp] : qps_) {
      hca_.destroy_qp(qpn);
      service_.qps_.remove(qp.get());
    }
    for (auto& [qpn, qp] : connected_) {
      hca_.destroy_qp(qpn);
      service_.connected_.remove(qp.get());
    }
    for (auto& [h, srq] : srqs_) {
      (void)hca_.destroy_srq(srq->srqn());
      service_.srqs_.remove(srq.get());
    }
    close_xrcds();
    hca_.remove_listener(this);
    if (async_fd_ >= 0) ::close(async_fd_);
  }

  void on_port_event(fabric::Hca&, uint8_t port, fabric::PortEvent event) override;
  void object_event(ibv_event_type type, uint64_t user_handle) const {
    AsyncEvent e;
    e.type = type;
    e.user_handle = user_handle;
    write_record(async_fd_, &e, sizeof e);
  }

  int64_t handle(MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds);
  bool run_rings(uint64_t limit) {
    bool work = false;
    for (auto& [qpn, qp] : qps_) work |= qp->run(limit);
    for (auto& [h, srq] : srqs_) work |= srq->run();
    for (auto& [qpn, qp] : connected_) work |= qp->run(limit);
    return work;
  }
  // run_rings(limit) for the process's program order, before one of its
  // requests acts: skipped while no client has posted since a walk that
  // left nothing posted here (`posts`: EnginePage::posts, read before).
  bool take_posted(uint64_t limit, uint64_t posts) {
    if (posts == posts_walked_) return false;
    const bool work = run_rings(limit);
    bool left = false;
    for (const auto& [qpn, qp] : qps_) left |= qp->posted();
    for (const auto& [qpn, qp] : connected_) left |= qp->posted();
    posts_walked_ = left ? kNever : posts;
    return work;
  }
  bool posted() const {
    for (const auto& [qpn, qp] : qps_)
      if (qp->posted()) return true;
    for (const auto& [qpn, qp] : connected_)
      if (qp->posted()) return true;
    return false;
  }
  bool ordered_by_caller() const { return ordered_by_caller_; }
  void set_ordered_by_caller(bool on) {
    ordered_by_caller_ = on;
    for (auto& [qpn, qp] : qps_) qp->set_stamped(on);
    for (auto& [qpn, qp] : connected_) qp->set_stamped(on);
  }
  fabric::Hca& hca() { return hca_; }
  VerbsService& service() { return service_; }

 private:
  int64_t create_channel(ReceivedFds& fds);
  int64_t create_cq(const CreateCq& req, ReceivedFds& fds);
  int64_t resize_cq(const ResizeCq& req, ReceivedFds& fds);
  int64_t create_qp(const CreateQp& req, ReceivedFds& fds);
  int64_t create_connected_qp(const CreateQp& req, ReceivedFds& fds, VerbsService::Cq* scq,
                              VerbsService::Cq* rcq);
  int64_t modify_qp(const ModifyQp& req);
  int64_t destroy(MsgType type, uint32_t handle);
  int64_t mcast(MsgType type, const McastRequest& req);
  template <class Map>
  static auto* find(Map& m, uint32_t handle) {
    auto it = m.find(handle);
    return it == m.end() ? nullptr : it->second.get();
  }

  VerbsService& service_;
  fabric::Hca& hca_;
  int async_fd_;
  static constexpr uint64_t kNever = UINT64_MAX;
  uint64_t posts_walked_ = kNever;  // EnginePage::posts before the last walk that left nothing posted
  bool ordered_by_caller_ = false;  // its rings are taken in program order by the engine (a MAD port is open)
  uint32_t next_handle_ = 1;
  VerbsMemory memory_;  // before the QPs, which go first
  std::map<uint32_t, std::unique_ptr<Channel>> channels_;
  std::map<uint32_t, std::unique_ptr<VerbsService::Cq>> cqs_;
  std::map<uint32_t, std::unique_ptr<VerbsService::Qp>> qps_;  // by QP number
  std::map<uint32_t, std::unique_ptr<VerbsService::ConnectedQp>> connected_;  // by QP number
  std::map<uint32_t, std::unique_ptr<VerbsService::SharedRq>> srqs_;  // by handle
  int64_t create_srq(const CreateSrq& req, ReceivedFds& fds);
  int64_t modify_srq(const ModifySrq& req);
  int64_t destroy_srq(uint32_t handle);

  // XRC domains this context opened (verbs_context_xrc.cpp), by handle:
  // the model's id and how many of this context's XRC SRQs and target
  // QPs are in it.
  struct XrcdHandle {
    uint32_t model = 0;
    uint32_t users = 0;
  };
  std::map<uint32_t, XrcdHandle> xrcds_;
  int64_t open_xrcd(const OpenXrcd& req, ReceivedFds& fds);
  int64_t close_xrcd(uint32_t handle);
  // Every domain left open, once its SRQs and QPs are gone.
  void close_xrcds();
  XrcdHandle* xrcd(uint32_t handle) {
    auto it = xrcds_.find(handle);
    return it == xrcds_.end() ? nullptr : &it->second;
  }
};

}  // namespace ibfab::api

#include "api/server/verbs_service.h"

#include <infiniband/verbs.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "api/client/verbs_rings.h"
#include "api/server/verbs_connected_qp.h"
#include "api/server/verbs_context.h"
#include "api/server/verbs_srq.h"
#include "api/server/verbs_ud_qp.h"

namespace ibfab::api {

static_assert(fabric::qp_mask::kState == IBV_QP_STATE && fabric::qp_mask::kAccessFlags == IBV_QP_ACCESS_FLAGS &&
              fabric::qp_mask::kPkeyIndex == IBV_QP_PKEY_INDEX && fabric::qp_mask::kPort == IBV_QP_PORT &&
              fabric::qp_mask::kAv == IBV_QP_AV && fabric::qp_mask::kPathMtu == IBV_QP_PATH_MTU &&
              fabric::qp_mask::kTimeout == IBV_QP_TIMEOUT && fabric::qp_mask::kRetryCnt == IBV_QP_RETRY_CNT &&
              fabric::qp_mask::kRnrRetry == IBV_QP_RNR_RETRY && fabric::qp_mask::kRqPsn == IBV_QP_RQ_PSN &&
              fabric::qp_mask::kMaxQpRdAtomic == IBV_QP_MAX_QP_RD_ATOMIC &&
              fabric::qp_mask::kMinRnrTimer == IBV_QP_MIN_RNR_TIMER && fabric::qp_mask::kSqPsn == IBV_QP_SQ_PSN &&
              fabric::qp_mask::kMaxDestRdAtomic == IBV_QP_MAX_DEST_RD_ATOMIC &&
              fabric::qp_mask::kDestQpn == IBV_QP_DEST_QPN);
static_assert(fabric::wr_opcode::kRdmaWrite == IBV_WR_RDMA_WRITE && fabric::wr_opcode::kSend == IBV_WR_SEND &&
              fabric::wr_opcode::kRdmaRead == IBV_WR_RDMA_READ &&
              fabric::wr_opcode::kAtomicFetchAndAdd == IBV_WR_ATOMIC_FETCH_AND_ADD &&
              fabric::wr_opcode::kSendWithInv == IBV_WR_SEND_WITH_INV);
static_assert(fabric::send_flag::kInline == IBV_SEND_INLINE && fabric::send_flag::kSignaled == IBV_SEND_SIGNALED &&
              fabric::send_flag::kSolicited == IBV_SEND_SOLICITED && fabric::send_flag::kFence == IBV_SEND_FENCE);
static_assert(fabric::wc_status::kRemAccessErr == IBV_WC_REM_ACCESS_ERR &&
              fabric::wc_status::kWrFlushErr == IBV_WC_WR_FLUSH_ERR &&
              fabric::wc_status::kRnrRetryExcErr == IBV_WC_RNR_RETRY_EXC_ERR);
static_assert(fabric::wc_opcode::kRecvRdmaWithImm == IBV_WC_RECV_RDMA_WITH_IMM &&
              fabric::wc_opcode::kFetchAdd == IBV_WC_FETCH_ADD && fabric::wc_flag::kWithInv == IBV_WC_WITH_INV &&
              fabric::wc_flag::kWithImm == IBV_WC_WITH_IMM && fabric::wc_flag::kGrh == IBV_WC_GRH);

VerbsService::VerbsService() {
  doorbell_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  page_.create(sizeof(rings::EnginePage), "ibfab-engine");
}

VerbsService::~VerbsService() {
  contexts_.clear();
  if (doorbell_ >= 0) ::close(doorbell_);
}

VerbsContext* VerbsService::open(fabric::Hca& hca, int async_fd, pid_t pid) {
  contexts_.push_back(std::make_unique<VerbsContext>(*this, hca, async_fd, pid));
  return contexts_.back().get();
}

void VerbsService::close(VerbsContext* context) {
  std::erase_if(contexts_, [&](const auto& c) { return c.get() == context; });
}

int64_t VerbsService::handle(VerbsContext& context, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
  return context.handle(type, msg, fds);
}

void VerbsService::count_late_drops(const fabric::Hca& hca, std::size_t n) { late_drops_[&hca] += n; }

uint64_t VerbsService::late_drops(const fabric::Hca& hca) const {
  auto it = late_drops_.find(&hca);
  return it == late_drops_.end() ? 0 : it->second;
}

bool VerbsService::run_rings() { return scan(false); }

bool VerbsService::scan(bool all) {
  // A context whose caller takes its rings only says whether it has work.
  auto qp = [](auto& q) { return q.context().ordered_by_caller() ? q.posted() : q.run(); };
  auto srq = [](SharedRq& s) { return !s.context().ordered_by_caller() && s.run(); };
  bool work = all ? qps_.run_all(qp) : qps_.run(qp);
  work |= all ? connected_.run_all(qp) : connected_.run(qp);
  work |= all ? srqs_.run_all(srq) : srqs_.run(srq);
  return work;
}

bool VerbsService::run_rings(VerbsContext& context, uint64_t limit) { return context.run_rings(limit); }

bool VerbsService::take_posted(VerbsContext& context, uint64_t limit) {
  auto* page = page_.as<rings::EnginePage>();
  if (!page) return context.run_rings(limit);
  return context.take_posted(limit, page->posts.value.load(std::memory_order_acquire));
}

bool VerbsService::posted(const VerbsContext& context) const { return context.posted(); }

void VerbsService::set_ordered_by_caller(VerbsContext& context, bool on) { context.set_ordered_by_caller(on); }

bool VerbsService::prepare_to_sleep(bool yielding) {
  auto* page = page_.as<rings::EnginePage>();
  if (!page) return true;
  page->sleeping.value.store(yielding ? rings::EnginePage::kYielding : rings::EnginePage::kSleeping,
                             std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the client's, after it posts
  if (scan(true)) {
    page->sleeping.value.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void VerbsService::woke() {
  if (auto* page = page_.as<rings::EnginePage>()) page->sleeping.value.store(0, std::memory_order_relaxed);
  uint64_t n;
  (void)!::read(doorbell_, &n, sizeof n);
}

}  // namespace ibfab::api

#include "api/verbs/qp_transitions.h"

namespace ibfab::verbs {
namespace {

struct Rule {
  bool valid = false;
  int required = 0;
  int optional = 0;
};

// The rule for each transport on one transition: UD, UC, RC, and XRC's
// initiator (XRC_SEND) and target (XRC_RECV), as the kernel's
// qp_state_table gives them.
struct PerType {
  Rule ud, uc, rc, ini, tgt;
};

constexpr int kRcExtra = IBV_QP_MIN_RNR_TIMER;
constexpr int kUcAlt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE;

PerType rule_for(ibv_qp_state cur, ibv_qp_state next) {
  constexpr Rule none{true, 0, 0};
  if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) return {none, none, none, none, none};
  switch (cur) {
    case IBV_QPS_RESET:
      if (next == IBV_QPS_INIT) {
        constexpr Rule connected{true, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0};
        return {{true, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0}, connected, connected, connected, connected};
      }
      break;
    case IBV_QPS_INIT:
      if (next == IBV_QPS_INIT) {
        constexpr Rule connected{true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS};
        return {{true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY}, connected, connected, connected, connected};
      }
      if (next == IBV_QPS_RTR) {
        constexpr int uc_req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
        constexpr int opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
        constexpr Rule rc{true, uc_req | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, opt};
        return {{true, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY}, {true, uc_req, opt}, rc, {true, uc_req, opt}, rc};
      }
      break;
    case IBV_QPS_RTR:
      if (next == IBV_QPS_RTS) {
        constexpr Rule rc{true,
                          IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                              IBV_QP_MAX_QP_RD_ATOMIC,
                          IBV_QP_CUR_STATE | kUcAlt | kRcExtra};
        return {{true, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY},
                {true, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | kUcAlt},
                rc,
                {true, rc.required, IBV_QP_CUR_STATE | kUcAlt},
                {true, IBV_QP_TIMEOUT | IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | kUcAlt | kRcExtra}};
      }
      break;
    case IBV_QPS_RTS:
    case IBV_QPS_SQD:
      if (next == IBV_QPS_RTS) {
        constexpr Rule rc{true, 0, IBV_QP_CUR_STATE | kUcAlt | kRcExtra};
        return {{true, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY}, {true, 0, IBV_QP_CUR_STATE | kUcAlt}, rc,
                {true, 0, IBV_QP_CUR_STATE | kUcAlt}, rc};
      }
      if (cur == IBV_QPS_RTS && next == IBV_QPS_SQD) {
        constexpr Rule r{true, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY};
        return {r, r, r, r, r};
      }
      if (cur == IBV_QPS_SQD && next == IBV_QPS_SQD) {
        constexpr int common = IBV_QP_AV | kUcAlt | IBV_QP_PKEY_INDEX;
        return {{true, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
                {true, 0, common},
                {true, 0,
                 common | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
                     IBV_QP_MAX_DEST_RD_ATOMIC | kRcExtra},
                {true, 0, common | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC},
                {true, 0, common | IBV_QP_TIMEOUT | IBV_QP_MAX_DEST_RD_ATOMIC | kRcExtra}};
      }
      break;
    case IBV_QPS_SQE:
      if (next == IBV_QPS_RTS)
        return {{true, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY}, {true, 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS}, {}, {},
                {}};
      break;
    default:
      break;
  }
  return {};
}

}  // namespace

bool transition_ok(ibv_qp_type type, ibv_qp_state cur, ibv_qp_state next, int mask) {
  if (cur > IBV_QPS_ERR || next > IBV_QPS_ERR) return false;
  const PerType p = rule_for(cur, next);
  Rule r;
  switch (type) {
    case IBV_QPT_UD: r = p.ud; break;
    case IBV_QPT_UC: r = p.uc; break;
    case IBV_QPT_RC: r = p.rc; break;
    case IBV_QPT_XRC_SEND: r = p.ini; break;
    case IBV_QPT_XRC_RECV: r = p.tgt; break;
    default: break;
  }
  if (!r.valid) return false;
  const int given = mask & ~IBV_QP_STATE;
  return (given & r.required) == r.required && (given & ~(r.required | r.optional)) == 0;
}

}  // namespace ibfab::verbs

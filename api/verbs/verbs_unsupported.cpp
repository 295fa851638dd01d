// Public calls of libibverbs.so.1 that ibfab does not model. Each fails the
// way rdma-core 44 fails when the provider lacks the operation (its
// verbs_dummy_ops): a pointer call returns NULL with errno EOPNOTSUPP, an int
// call returns EOPNOTSUPP, an "un-" call does nothing. Where rdma-core checks
// arguments before reaching the provider, the same checks come first here.
// None of these calls reads the objects it is given unless said below, so
// they also accept objects of another library.
#include <infiniband/verbs.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>

#include "api/verbs/export.h"

namespace ibfab::verbs {
namespace {

// errno = EOPNOTSUPP, and NULL as the calls returning a T* fail.
template <typename T>
T* unsupported_object() {
  errno = EOPNOTSUPP;
  return nullptr;
}

}  // namespace
}  // namespace ibfab::verbs

using ibfab::verbs::unsupported_object;

// EINVAL if cmd_fd is not an open character device (rdma-core's first check),
// else EOPNOTSUPP: no ibfab device can adopt another process's context.
IBFAB_VERBS_EXPORT ibv_context* ibv_import_device(int cmd_fd) {
  struct stat st {};
  if (fstat(cmd_fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
    errno = EINVAL;
    return nullptr;
  }
  return unsupported_object<ibv_context>();
}

IBFAB_VERBS_EXPORT ibv_pd* ibv_import_pd(ibv_context* /*context*/, std::uint32_t /*pd_handle*/) {
  return unsupported_object<ibv_pd>();
}

IBFAB_VERBS_EXPORT void ibv_unimport_pd(ibv_pd* /*pd*/) {}

IBFAB_VERBS_EXPORT ibv_mr* ibv_import_mr(ibv_pd* /*pd*/, std::uint32_t /*mr_handle*/) {
  return unsupported_object<ibv_mr>();
}

IBFAB_VERBS_EXPORT void ibv_unimport_mr(ibv_mr* /*mr*/) {}

IBFAB_VERBS_EXPORT ibv_dm* ibv_import_dm(ibv_context* /*context*/, std::uint32_t /*dm_handle*/) {
  return unsupported_object<ibv_dm>();
}

IBFAB_VERBS_EXPORT void ibv_unimport_dm(ibv_dm* /*dm*/) {}

IBFAB_VERBS_EXPORT ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* /*pd*/, std::uint64_t /*offset*/, std::size_t /*length*/,
                                             std::uint64_t /*iova*/, int /*fd*/, int /*access*/) {
  return unsupported_object<ibv_mr>();
}

IBFAB_VERBS_EXPORT int ibv_query_ece(ibv_qp* /*qp*/, ibv_ece* /*ece*/) {
  return EOPNOTSUPP;
}

// EOPNOTSUPP. Reads ece->vendor_id: rdma-core refuses a zero vendor before
// asking the provider, and only that refusal also sets errno.
IBFAB_VERBS_EXPORT int ibv_set_ece(ibv_qp* /*qp*/, ibv_ece* ece) {
  if (ece->vendor_id == 0) errno = EOPNOTSUPP;
  return EOPNOTSUPP;
}

// 0: no guarantee that data lands in order, what rdma-core answers for a
// provider without the operation.
IBFAB_VERBS_EXPORT int ibv_query_qp_data_in_order(ibv_qp* /*qp*/, ibv_wr_opcode /*op*/, std::uint32_t /*flags*/) {
  return 0;
}

// -EINVAL (a negative errno, as this call reports errors): ibfab ports are
// InfiniBand, with no Ethernet neighbour to resolve. rdma-core gives the
// same for an InfiniBand GID, whose address no network interface has.
IBFAB_VERBS_EXPORT int ibv_resolve_eth_l2_from_gid(ibv_context* /*context*/, ibv_ah_attr* /*attr*/,
                                                   std::uint8_t* /*eth_mac*/, std::uint16_t* /*vid*/) {
  return -EINVAL;
}

// ibv_register_driver@IBVERBS_1.1, a non-default (compatibility) version
// only, as in rdma-core: binaries of old libibverbs releases that call it
// still load, new programs cannot link to it. It does nothing.
// Not declared by any installed header; the signature is rdma-core's
// (provider name, init function), with the function as void*.
IBFAB_VERBS_EXPORT void ibfab_verbs_register_driver_compat(const char* /*name*/, void* /*init_func*/) {}
__asm__(".symver ibfab_verbs_register_driver_compat, ibv_register_driver@IBVERBS_1.1");


// The rsocket API of librdmacm.so.1 (<rdma/rsocket.h>): sockets over RDMA
// connections. ibfab does not provide it; the names exist because programs
// linked BIND_NOW reference them (mckey and udaddy use rpoll) and would not
// load otherwise. Every call fails with errno ENOSYS: an int or ssize_t call
// returns -1, riomap returns (off_t)-1 and riowrite (size_t)-1. None of them
// reads its arguments.
#include <rdma/rsocket.h>

#include <cerrno>

#include "api/rdmacm/export.h"

namespace ibfab::rdmacm {
namespace {

// errno = ENOSYS, and -1 in the call's return type.
template <typename T>
T not_provided() {
  errno = ENOSYS;
  return static_cast<T>(-1);
}

}  // namespace
}  // namespace ibfab::rdmacm

using ibfab::rdmacm::not_provided;

IBFAB_RDMACM_EXPORT int rsocket(int /*domain*/, int /*type*/, int /*protocol*/) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT int rbind(int /*socket*/, const sockaddr* /*addr*/, socklen_t /*addrlen*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rlisten(int /*socket*/, int /*backlog*/) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT int raccept(int /*socket*/, sockaddr* /*addr*/, socklen_t* /*addrlen*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rconnect(int /*socket*/, const sockaddr* /*addr*/, socklen_t /*addrlen*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rshutdown(int /*socket*/, int /*how*/) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT int rclose(int /*socket*/) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT ssize_t rrecv(int /*socket*/, void* /*buf*/, size_t /*len*/, int /*flags*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rrecvfrom(int /*socket*/, void* /*buf*/, size_t /*len*/, int /*flags*/,
                                      sockaddr* /*src_addr*/, socklen_t* /*addrlen*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rrecvmsg(int /*socket*/, msghdr* /*msg*/, int /*flags*/) { return not_provided<ssize_t>(); }

IBFAB_RDMACM_EXPORT ssize_t rsend(int /*socket*/, const void* /*buf*/, size_t /*len*/, int /*flags*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rsendto(int /*socket*/, const void* /*buf*/, size_t /*len*/, int /*flags*/,
                                    const sockaddr* /*dest_addr*/, socklen_t /*addrlen*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rsendmsg(int /*socket*/, const msghdr* /*msg*/, int /*flags*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rread(int /*socket*/, void* /*buf*/, size_t /*count*/) { return not_provided<ssize_t>(); }

IBFAB_RDMACM_EXPORT ssize_t rreadv(int /*socket*/, const iovec* /*iov*/, int /*iovcnt*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rwrite(int /*socket*/, const void* /*buf*/, size_t /*count*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT ssize_t rwritev(int /*socket*/, const iovec* /*iov*/, int /*iovcnt*/) {
  return not_provided<ssize_t>();
}

IBFAB_RDMACM_EXPORT int rpoll(pollfd* /*fds*/, nfds_t /*nfds*/, int /*timeout*/) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT int rselect(int /*nfds*/, fd_set* /*readfds*/, fd_set* /*writefds*/, fd_set* /*exceptfds*/,
                                timeval* /*timeout*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rgetpeername(int /*socket*/, sockaddr* /*addr*/, socklen_t* /*addrlen*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rgetsockname(int /*socket*/, sockaddr* /*addr*/, socklen_t* /*addrlen*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rsetsockopt(int /*socket*/, int /*level*/, int /*optname*/, const void* /*optval*/,
                                    socklen_t /*optlen*/) {
  return not_provided<int>();
}

IBFAB_RDMACM_EXPORT int rgetsockopt(int /*socket*/, int /*level*/, int /*optname*/, void* /*optval*/,
                                    socklen_t* /*optlen*/) {
  return not_provided<int>();
}

// The variadic argument is not read.
IBFAB_RDMACM_EXPORT int rfcntl(int /*socket*/, int /*cmd*/, ...) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT off_t riomap(int /*socket*/, void* /*buf*/, size_t /*len*/, int /*prot*/, int /*flags*/,
                                 off_t /*offset*/) {
  return not_provided<off_t>();
}

IBFAB_RDMACM_EXPORT int riounmap(int /*socket*/, void* /*buf*/, size_t /*len*/) { return not_provided<int>(); }

IBFAB_RDMACM_EXPORT size_t riowrite(int /*socket*/, const void* /*buf*/, size_t /*count*/, off_t /*offset*/,
                                    int /*flags*/) {
  return not_provided<size_t>();
}

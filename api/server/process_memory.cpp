#include "api/server/process_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <utility>

namespace ibfab::api {
namespace {

// One transfer of `length` bytes between `local` and the process's `addr`;
// process_vm_* may stop short (at a fault), so the rest is tried until it
// is all done or nothing more moves.
template <class Local, class Call>
bool transfer(pid_t pid, uint64_t addr, Local* local, std::size_t length, Call call) {
  std::size_t done = 0;
  while (done < length) {
    iovec l{const_cast<void*>(static_cast<const void*>(reinterpret_cast<const uint8_t*>(local) + done)),
            length - done};
    iovec r{reinterpret_cast<void*>(addr + done), length - done};
    const ssize_t n = call(pid, &l, 1, &r, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool ProcessMemory::read(uint64_t addr, std::span<uint8_t> out) {
  write_out();
  return transfer(pid_, addr, out.data(), out.size(), ::process_vm_readv);
}

bool ProcessMemory::write(uint64_t addr, std::span<const uint8_t> in) {
  write_out();
  return transfer(pid_, addr, in.data(), in.size(), ::process_vm_writev);
}

bool ProcessMemory::write_posted(uint64_t addr, std::span<const uint8_t> in) {
  const bool follows = !posted_.empty() && addr == posted_at_ + posted_.size();
  if (!follows || posted_.size() + in.size() > kChunk) {
    write_out();
    posted_at_ = addr;
  }
  if (posted_.capacity() < kChunk) posted_.reserve(kChunk);
  posted_.insert(posted_.end(), in.begin(), in.end());
  return true;
}

void ProcessMemory::write_out() {
  if (posted_.empty()) return;
  if (!transfer(pid_, posted_at_, posted_.data(), posted_.size(), ::process_vm_writev)) posted_failed_ = true;
  posted_.clear();
}

bool ProcessMemory::flush() {
  write_out();
  return !std::exchange(posted_failed_, false);
}

int ProcessMemory::check_readable(uint64_t addr, uint64_t length) const {
  if (length == 0) return 0;
  if (addr + length < addr) return EFAULT;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  constexpr std::size_t kBatch = IOV_MAX;
  std::array<uint8_t, kBatch> sink;
  std::array<iovec, kBatch> remote;
  iovec local{sink.data(), 0};
  uint64_t at = addr;
  const uint64_t end = addr + length;
  while (at < end) {
    // One byte of each page: the first at `at`, then each page start.
    std::size_t n = 0;
    for (; n < kBatch && at < end; ++n) {
      remote[n] = {reinterpret_cast<void*>(at), 1};
      at = (at & ~(page - 1)) + page;
    }
    local.iov_len = n;
    ssize_t got;
    do {
      got = ::process_vm_readv(pid_, &local, 1, remote.data(), n, 0);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return errno == EFAULT ? EFAULT : errno;
    if (static_cast<std::size_t>(got) != n) return EFAULT;
  }
  return 0;
}

}  // namespace ibfab::api

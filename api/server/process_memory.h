#pragma once
// A client process's address space as the HCA model's DMA reaches it
// (fabric::HostMemory): process_vm_readv / process_vm_writev on its pid.
// The pid is the one the kernel reported for the client's socket
// (SO_PEERCRED), never one the client wrote. In embedded mode it is the
// engine's own process, and the same calls work.
//
// The kernel allows it when the engine may ptrace the client: same user,
// and under Yama's ptrace_scope 1 the client's PR_SET_PTRACER naming the
// engine (the client library does that when it opens a device).
#include <sys/types.h>

#include <cstdint>
#include <span>
#include <vector>

#include "fabric/model/host_memory.h"

namespace ibfab::api {

class ProcessMemory final : public fabric::HostMemory {
 public:
  static constexpr uint32_t kChunk = 256u << 10;

  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  pid_t pid() const { return pid_; }

  bool read(uint64_t addr, std::span<uint8_t> out) override;
  bool write(uint64_t addr, std::span<const uint8_t> in) override;
  // A system call costs microseconds, a 4 KiB copy a tenth of one: a
  // message's bytes are read up to kChunk at a time.
  uint32_t read_ahead() const override { return kChunk; }
  // Posted writes to consecutive addresses are combined, up to kChunk
  // bytes, into one system call.
  bool write_posted(uint64_t addr, std::span<const uint8_t> in) override;
  bool flush() override;

  // Whether every page of [addr, addr + length) can be read, as the kernel's
  // ib_umem_get pins them at ibv_reg_mr: 0, EFAULT (a page is not mapped),
  // or the error the kernel gave for the process (EPERM: another user, or
  // Yama refused; ESRCH: it is gone). One system call per IOV_MAX pages.
  int check_readable(uint64_t addr, uint64_t length) const;

 private:
  // Writes what is posted; a failure is kept for the next flush().
  void write_out();

  pid_t pid_;
  std::vector<uint8_t> posted_;  // bytes posted for [posted_at_, posted_at_ + size)
  uint64_t posted_at_ = 0;
  bool posted_failed_ = false;
};

}  // namespace ibfab::api

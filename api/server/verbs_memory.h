#pragma once
// What one verbs connection registered in its HCA's memory protection
// table (fabric::MemoryTable): protection domains, memory regions over the
// client process's address space (ProcessMemory) and memory windows. The
// table's keys are the ones the client gets back. Everything goes when the
// connection closes (the caller destroys the context's QPs first).
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/client/verbs_protocol.h"
#include "api/server/process_memory.h"
#include "fabric/model/hca.h"

namespace ibfab::api {

class VerbsMemory {
 public:
  // `refused` is called once per connection when the kernel will not let
  // the engine reach the process's memory (its text says why).
  VerbsMemory(fabric::Hca& hca, pid_t pid, std::function<void(const std::string&)> refused);
  ~VerbsMemory();
  VerbsMemory(const VerbsMemory&) = delete;
  VerbsMemory& operator=(const VerbsMemory&) = delete;

  // Each returns the reply value: a handle or key (> 0), 0, or -errno.
  int64_t alloc_pd();
  int64_t dealloc_pd(uint32_t pd);
  int64_t reg_mr(const RegMr& r);
  int64_t rereg_mr(const ReregMr& r);
  int64_t dereg_mr(uint32_t key);
  int64_t alloc_mw(const AllocMw& r);
  // `handle`: the rkey AllocMw replied; binds since may have changed the
  // window's key. A bound window is invalidated and goes.
  int64_t dealloc_mw(uint32_t handle);

  bool has_pd(uint32_t pd) const;
  // Writes out what a QP's message left posted (ProcessMemory::flush), as
  // the HCA had placed it before the QP went.
  void flush_posted() { memory_.flush(); }

 private:
  struct Region {
    uint32_t pd;
    uint64_t addr, length, iova;
    uint32_t access;
  };
  // 0 or the errno that refuses registering [addr, addr + length) for `iova`
  // with `access` (the kernel's checks at ib_uverbs_reg_mr / ib_umem_get).
  int check(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access);

  fabric::Hca& hca_;
  ProcessMemory memory_;
  std::function<void(const std::string&)> refused_;
  bool told_ = false;
  std::vector<uint32_t> pds_;
  std::unordered_map<uint32_t, Region> regions_;  // by key
  std::unordered_map<uint32_t, uint32_t> windows_;  // the first rkey (the handle) -> PD
  // Frees the window `handle` names, bound or not.
  int release_window(uint32_t handle, uint32_t pd);
};

}  // namespace ibfab::api

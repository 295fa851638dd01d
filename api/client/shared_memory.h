#pragma once
// A shared-memory region: a memfd mapped read-write, unmapped and closed on
// destruction. One side creates it and passes the fd (SCM_RIGHTS); the other
// maps it.
#include <cstddef>

namespace ibfab::api {

class SharedMemory {
 public:
  SharedMemory() = default;
  ~SharedMemory() { reset(); }
  SharedMemory(SharedMemory&& o) noexcept { *this = static_cast<SharedMemory&&>(o); }
  SharedMemory& operator=(SharedMemory&& o) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  // A new zero-filled region of `bytes`; returns 0 or -errno.
  int create(std::size_t bytes, const char* name);
  // Maps `fd` (taking it over; it is closed on failure too); the region must
  // be at least `bytes` long. Returns 0 or -errno (-EINVAL: too small).
  int map(int fd, std::size_t bytes);
  void reset();

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  int fd() const { return fd_; }
  template <class T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
};

}  // namespace ibfab::api

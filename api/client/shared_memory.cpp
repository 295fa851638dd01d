#include "api/client/shared_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ibfab::api {

SharedMemory& SharedMemory::operator=(SharedMemory&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

int SharedMemory::create(std::size_t bytes, const char* name) {
  reset();
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -errno;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    ::close(fd);
    return -e;
  }
  return map(fd, bytes);
}

int SharedMemory::map(int fd, std::size_t bytes) {
  reset();
  struct stat st{};
  if (bytes == 0 || ::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < bytes) {
    ::close(fd);
    return -EINVAL;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    return -e;
  }
  data_ = p;
  size_ = bytes;
  fd_ = fd;
  return 0;
}

void SharedMemory::reset() {
  if (data_) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

}  // namespace ibfab::api

// A verbs connection's XRC domains (ibv_open_xrcd, ibv_close_xrcd): the
// host's domains are the service's XrcDomains, shared by inode; a context
// holds a handle per open and counts its own SRQs and target QPs in each.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "api/server/verbs_context.h"

namespace ibfab::api {

int64_t VerbsContext::open_xrcd(const OpenXrcd& req, ReceivedFds& fds) {
  if (fds.count != (req.has_file ? 1 : 0)) return -EINVAL;
  std::optional<XrcDomains::Inode> file;
  if (req.has_file) {
    // The file's inode names the domain, as the kernel's uverbs keys it.
    const int fd = fds.take(0);
    struct stat st {};
    const int r = ::fstat(fd, &st);
    ::close(fd);
    if (r != 0) return -EBADF;
    file = XrcDomains::Inode{st.st_dev, st.st_ino};
  }
  const int64_t model = service_.xrc_domains_.open(hca_, file, req.oflags);
  if (model < 0) return model;
  const uint32_t h = next_handle_++;
  xrcds_.emplace(h, XrcdHandle{static_cast<uint32_t>(model), 0});
  return h;
}

int64_t VerbsContext::close_xrcd(uint32_t handle) {
  auto it = xrcds_.find(handle);
  if (it == xrcds_.end()) return -EINVAL;
  if (it->second.users != 0) return -EBUSY;  // as uverbs: this context's SRQs or target QPs remain
  if (const int e = service_.xrc_domains_.close(hca_, it->second.model)) return -e;
  xrcds_.erase(it);
  return 0;
}

void VerbsContext::close_xrcds() {
  for (const auto& [h, x] : xrcds_) (void)service_.xrc_domains_.close(hca_, x.model);
  xrcds_.clear();
}

}  // namespace ibfab::api

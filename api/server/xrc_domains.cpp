#include "api/server/xrc_domains.h"

#include <fcntl.h>

#include <cerrno>

#include "fabric/model/hca.h"

namespace ibfab::api {

int64_t XrcDomains::open(fabric::Hca& hca, std::optional<Inode> file, uint32_t oflags) {
  if (file) {
    auto it = by_inode_.find(Key{&hca, file->dev, file->ino});
    if (it != by_inode_.end()) {
      if (oflags & O_EXCL) return -EINVAL;
      ++openers_[{&hca, it->second}];
      return it->second;
    }
    if (!(oflags & O_CREAT)) return -EINVAL;
  }
  const uint32_t id = hca.alloc_xrcd();
  if (file) by_inode_.emplace(Key{&hca, file->dev, file->ino}, id);
  openers_[{&hca, id}] = 1;
  return id;
}

int XrcDomains::close(fabric::Hca& hca, uint32_t xrcd) {
  auto it = openers_.find({&hca, xrcd});
  if (it == openers_.end()) return EINVAL;
  if (it->second > 1) {
    --it->second;
    return 0;
  }
  if (const int e = hca.dealloc_xrcd(xrcd)) return e;
  openers_.erase(it);
  std::erase_if(by_inode_, [&](const auto& kv) { return std::get<0>(kv.first) == &hca && kv.second == xrcd; });
  return 0;
}

}  // namespace ibfab::api

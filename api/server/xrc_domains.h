#pragma once
// The hosts' XRC domains as the kernel's uverbs keeps them: per device, a
// domain opened with a file is found by that file's inode (st_dev,
// st_ino), so every process of the host that opens the same file on the
// same HCA shares it; one opened without a file is its opener's alone. A
// domain is the HCA model's (fabric::Hca::alloc_xrcd) and goes when its
// last opener closes it.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

namespace ibfab::fabric {
class Hca;
}

namespace ibfab::api {

class XrcDomains {
 public:
  struct Inode {
    dev_t dev = 0;
    ino_t ino = 0;
  };
  // The model's domain id for an opener, or -errno: with a file, the one
  // of its inode, made only when `oflags` has O_CREAT (else -EINVAL), and
  // -EINVAL with O_EXCL when it exists; without, a new one.
  int64_t open(fabric::Hca& hca, std::optional<Inode> file, uint32_t oflags);
  // One opener of `xrcd` leaves; the last one's close frees it in the
  // model. 0, or the model's errno (EBUSY while objects remain in it).
  int close(fabric::Hca& hca, uint32_t xrcd);
  std::size_t size() const { return openers_.size(); }

 private:
  using Key = std::tuple<const fabric::Hca*, dev_t, ino_t>;
  std::map<Key, uint32_t> by_inode_;                           // -> the model's id
  std::map<std::pair<const fabric::Hca*, uint32_t>, uint32_t> openers_;  // (HCA, id) -> openers
};

}  // namespace ibfab::api

#include "api/server/kernel/host_stack.h"

#include <stdexcept>

namespace ibfab::api {

fabric::Hca& HostStacks::first_host() const {
  for (const auto& s : stacks_)
    if (s) return *s->hca;
  throw std::logic_error("a fabric with no host");
}

bool HostStacks::ipoib_settled() {
  const auto settled = [](const HostStack& s) {
    for (const PortStack& ps : s.ports)
      if (!ps.ipoib->settled()) return false;
    return true;
  };
  const auto first_unsettled = [&](std::size_t from) {
    while (from < stacks_.size() && (!stacks_[from] || settled(*stacks_[from]))) ++from;
    return from;
  };
  const std::size_t from = ipoib_cursor_;
  ipoib_cursor_ = first_unsettled(from);
  // A pass that began past the first host looks again from the start.
  if (ipoib_cursor_ == stacks_.size() && from != 0) ipoib_cursor_ = first_unsettled(0);
  if (ipoib_cursor_ < stacks_.size()) return false;
  ipoib_cursor_ = 0;
  return true;
}

}  // namespace ibfab::api

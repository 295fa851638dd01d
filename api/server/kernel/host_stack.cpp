#include "api/server/kernel/host_stack.h"

#include <stdexcept>

namespace ibfab::api {

fabric::Hca& HostStacks::first_host() const {
  for (const auto& s : stacks_)
    if (s) return *s->hca;
  throw std::logic_error("a fabric with no host");
}

namespace {

bool ipoib_settled_on(const HostStack& s) {
  for (const PortStack& ps : s.ports)
    if (!ps.ipoib->settled()) return false;
  return true;
}

}  // namespace

std::size_t HostStacks::ipoib_hosts_settled() const {
  std::size_t n = 0;
  for_each([&](const HostStack& s) { n += ipoib_settled_on(s); });
  return n;
}

std::size_t HostStacks::hosts() const {
  std::size_t n = 0;
  for_each([&](const HostStack&) { ++n; });
  return n;
}

bool HostStacks::ipoib_settled() {
  const auto settled = ipoib_settled_on;
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

#pragma once
// The multicast manager's policies, one of each kind, chosen by name (a
// scenario's `sm:` section). Defaults are OpenSM's.
#include <memory>
#include <string_view>

#include "sm/mcast/join_admission.h"
#include "sm/mcast/mlid_allocator.h"
#include "sm/mcast/root_selector.h"
#include "sm/mcast/tree_builder.h"

namespace ibfab::sm {

struct McastPolicies {
  std::unique_ptr<RootSelector> root;
  std::unique_ptr<TreeBuilder> tree;
  std::unique_ptr<MlidAllocator> mlids;
  std::unique_ptr<JoinAdmission> admission;

  // min-max-hop, shortest-path, lowest-free, unlimited.
  static McastPolicies opensm();
  // Any null member replaced by its OpenSM default.
  McastPolicies with_defaults() &&;
};

// Throws std::invalid_argument("unknown <kind> 'x' (known: a, b)") for an
// unknown name.
McastPolicies make_mcast_policies(std::string_view root = "min-max-hop", std::string_view tree = "shortest-path",
                                  std::string_view mlids = "lowest-free", std::string_view admission = "unlimited");

}  // namespace ibfab::sm

#include "sm/mcast/mcast_policies.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace ibfab::sm {

namespace {

template <typename T>
std::unique_ptr<T> must(std::unique_ptr<T> p, std::string_view kind, std::string_view name,
                        const std::vector<std::string_view>& known) {
  if (p) return p;
  std::string list;
  for (const std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  throw std::invalid_argument("unknown " + std::string(kind) + " '" + std::string(name) + "' (known: " + list + ")");
}

}  // namespace

McastPolicies McastPolicies::opensm() { return McastPolicies{}.with_defaults(); }

McastPolicies McastPolicies::with_defaults() && {
  if (!root) root = std::make_unique<MinMaxHopRoot>();
  if (!tree) tree = std::make_unique<ShortestPathTree>();
  if (!mlids) mlids = std::make_unique<LowestFreeMlid>();
  if (!admission) admission = std::make_unique<UnlimitedJoins>();
  return std::move(*this);
}

McastPolicies make_mcast_policies(std::string_view root, std::string_view tree, std::string_view mlids,
                                  std::string_view admission) {
  McastPolicies p;
  p.root = must(make_root_selector(root), "multicast root selection", root, root_selector_names());
  p.tree = must(make_tree_builder(tree), "multicast tree builder", tree, tree_builder_names());
  p.mlids = must(make_mlid_allocator(mlids), "MLID allocator", mlids, mlid_allocator_names());
  p.admission = must(make_join_admission(admission), "join admission", admission, join_admission_names());
  return p;
}

}  // namespace ibfab::sm

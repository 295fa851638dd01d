#include "sm/routing/routing_engine.h"

#include "sm/routing/fat_tree.h"
#include "sm/routing/min_hop.h"
#include "sm/routing/up_down.h"

namespace ibfab::sm {

std::unique_ptr<RoutingEngine> make_routing_engine(std::string_view name) {
  if (name == "minhop") return std::make_unique<MinHopEngine>();
  if (name == "updn") return std::make_unique<UpDownEngine>();
  if (name == "ftree") return std::make_unique<FatTreeEngine>();
  return nullptr;
}

std::vector<std::string_view> routing_engine_names() { return {"minhop", "updn", "ftree"}; }

}  // namespace ibfab::sm

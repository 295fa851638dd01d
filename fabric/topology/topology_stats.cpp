#include "fabric/topology/topology_stats.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/pending/queue.hpp>
#include <boost/property_map/property_map.hpp>

namespace ibfab::topo {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
constexpr unsigned kUnreached = std::numeric_limits<unsigned>::max();

bool all_linked(const Topology& t) {
  const size_t n = t.nodes().size();
  if (n <= 1) return true;
  Graph g(n);
  for (const LinkDesc& l : t.links()) boost::add_edge(l.a.node, l.b.node, g);
  std::vector<size_t> component(n);
  return boost::connected_components(g, component.data()) == 1;
}

// Hop counts from the nearest of `sources` to every switch of `g`.
void bfs(const Graph& g, const std::vector<Vertex>& sources, std::vector<unsigned>& dist,
         std::vector<boost::default_color_type>& color) {
  std::fill(dist.begin(), dist.end(), kUnreached);
  std::fill(color.begin(), color.end(), boost::white_color);
  for (Vertex s : sources) dist[s] = 0;
  boost::queue<Vertex> queue;
  boost::breadth_first_search(
      g, sources.begin(), sources.end(), queue,
      boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge())),
      color.data());
}

}  // namespace

TopologyStats compute_stats(const Topology& t) {
  TopologyStats s;
  s.hcas = t.hca_count();
  s.switches = t.switch_count();
  s.links = t.links().size();
  const auto& nodes = t.nodes();
  const auto is_switch = [&](uint32_t n) { return nodes[n].kind == NodeKind::Switch; };

  // Switch graph: vertex = rank of the switch among switches.
  std::vector<Vertex> rank(nodes.size(), 0);
  Vertex next = 0;
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (is_switch(n)) rank[n] = next++;
  Graph g(s.switches);
  // Per HCA: the switches it is cabled to.
  std::vector<std::vector<Vertex>> attach(nodes.size());
  for (const LinkDesc& l : t.links()) {
    const bool sa = is_switch(l.a.node), sb = is_switch(l.b.node);
    if (sa && sb) {
      ++s.switch_links;
      boost::add_edge(rank[l.a.node], rank[l.b.node], g);
      continue;
    }
    ++s.host_links;
    if (sa) attach[l.b.node].push_back(rank[l.a.node]);
    else if (sb) attach[l.a.node].push_back(rank[l.b.node]);
  }

  // Hosts grouped by attachment set; hosts with none reach only HCA peers.
  std::map<std::vector<Vertex>, size_t> groups;
  size_t isolated = 0;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    if (is_switch(n)) continue;
    auto& a = attach[n];
    if (a.empty()) {
      ++isolated;
      continue;
    }
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    ++groups[a];
  }

  s.connected = all_linked(t);
  if (isolated > 0) {
    // Only two HCAs cabled back to back can still all reach each other.
    const bool pair = s.hcas == 2 && isolated == 2 && s.switches == 0;
    s.connected = s.connected && (s.hcas < 2 || pair);
    s.diameter = s.connected && pair ? 1 : 0;
    return s;
  }

  unsigned widest = 0;  // max switch-to-switch hops between two hosts' attachments
  bool two_hosts = false;
  std::vector<unsigned> dist(s.switches);
  std::vector<boost::default_color_type> color(s.switches);
  for (auto from = groups.begin(); from != groups.end() && s.connected; ++from) {
    if (from->second >= 2) two_hosts = true;  // two hosts on the same switch set: 0 hops
    bfs(g, from->first, dist, color);
    for (auto to = groups.begin(); to != groups.end(); ++to) {
      if (to == from) continue;
      two_hosts = true;
      unsigned nearest = kUnreached;
      for (Vertex v : to->first) nearest = std::min(nearest, dist[v]);
      if (nearest == kUnreached) s.connected = false;
      else widest = std::max(widest, nearest);
    }
  }
  s.diameter = s.connected && two_hosts ? widest + 2 : 0;
  return s;
}

}  // namespace ibfab::topo

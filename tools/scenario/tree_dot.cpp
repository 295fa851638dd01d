#include "tools/scenario/tree_dot.h"

#include <set>

#include "fabric/model/fabric.h"

namespace ibfab::scenario {
namespace {

bool forwards(const fabric::Port& p, uint16_t mlid) {
  const auto& sw = static_cast<const fabric::Switch&>(p.node());
  return (sw.mft(mlid, static_cast<uint8_t>(p.number() / 16)) >> (p.number() % 16) & 1) != 0;
}

}  // namespace

void write_tree_dot(std::ostream& out, const fabric::Fabric& f, uint16_t mlid, const std::string& title,
                    const std::vector<const fabric::Port*>& members) {
  std::set<const fabric::Node*> member_nodes;
  for (const fabric::Port* p : members) member_nodes.insert(&p->node());
  out << "graph \"mlid " << std::hex << mlid << std::dec << "\" {\n"
      << "  label=\"" << title << "\";\n  labelloc=t;\n  layout=dot;\n  node [fontsize=10];\n";
  // Hosts in one row at the bottom; switches above, as dot ranks them.
  // Switches and member hosts; the members in one row at the bottom.
  out << "  { rank=sink;";
  for (const fabric::Node* n : member_nodes) out << " \"" << n->name() << "\";";
  out << " }\n";
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    const fabric::Node& n = f.node(i);
    if (!n.is_switch() && !member_nodes.count(&n)) continue;
    out << "  \"" << n.name() << "\" [shape=" << (n.is_switch() ? "box" : "ellipse");
    if (member_nodes.count(&n)) out << ", style=filled, fillcolor=\"#f4a261\"";
    out << "];\n";
  }
  for (uint32_t i = 0; i < f.link_count(); ++i) {
    const fabric::Link& l = f.link(i);
    const fabric::Port* a = l.end(0);
    const fabric::Port* b = l.end(1);
    // On the tree: a switch-to-switch cable both of whose ends forward the
    // MLID, or a cable to a member host that its switch forwards the MLID to.
    const bool a_sw = a->node().is_switch(), b_sw = b->node().is_switch();
    if ((!a_sw && !member_nodes.count(&a->node())) || (!b_sw && !member_nodes.count(&b->node()))) continue;
    bool on_tree = false;
    if (a_sw && b_sw) on_tree = forwards(*a, mlid) && forwards(*b, mlid);
    else if (a_sw) on_tree = forwards(*a, mlid) && member_nodes.count(&b->node());
    else if (b_sw) on_tree = forwards(*b, mlid) && member_nodes.count(&a->node());
    out << "  \"" << a->node().name() << "\" -- \"" << b->node().name() << "\" [";
    if (on_tree) out << "color=\"#e76f51\", penwidth=2.5";
    else out << "color=\"#cccccc\"";
    out << "];\n";
  }
  out << "}\n";
}

}  // namespace ibfab::scenario

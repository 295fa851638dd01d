#include "fabric/topology/dot_writer.h"

#include <string>
#include <string_view>

namespace ibfab::topo {
namespace {

// A DOT double-quoted string. Names hold no '"' or control characters
// (Topology invariant); backslashes are escaped.
std::string quote(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') q += '\\';
    q += c;
  }
  return q + '"';
}

}  // namespace

void write_dot(std::ostream& out, const Topology& t) {
  out << "graph fabric {\n  node [fontname=\"Helvetica\"];\n";
  for (const NodeDesc& n : t.nodes())
    out << "  " << quote(n.name) << " [shape=" << (n.kind == NodeKind::Switch ? "box" : "ellipse")
        << "];\n";
  for (const LinkDesc& l : t.links())
    out << "  " << quote(t.nodes()[l.a.node].name) << " -- " << quote(t.nodes()[l.b.node].name)
        << " [taillabel=\"" << unsigned{l.a.port} << "\", headlabel=\"" << unsigned{l.b.port}
        << "\"];\n";
  out << "}\n";
}

}  // namespace ibfab::topo

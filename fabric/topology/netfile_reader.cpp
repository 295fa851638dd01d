#include "fabric/topology/netfile_reader.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "fabric/topology/guid_allocator.h"
#include "fabric/topology/line_cursor.h"
#include "fabric/topology/topology_builder.h"

namespace ibfab::topo {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct RawNode {
  NodeDesc desc;
  size_t line = 0;
  std::vector<uint32_t> decl;  // per port: index into Parser::decls_, or kNone
};

// One port line: "this port is cabled to PEER[peer_port]".
struct PortDecl {
  uint32_t node = 0;
  uint8_t port = 0;
  uint8_t peer_port = 0;
  std::string peer;
  std::optional<fabric::LinkRate> rate;
  size_t line = 0;
};

std::string excerpt(std::string_view text) {
  constexpr size_t kMax = 40;
  return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

// "4xEDR" -> rate; "FDR10" reads as QDR (same nominal 10 Gb/s per lane).
// nullopt when the token does not have the NxSPEED shape at all;
// `bad` when it has the shape but names no rate.
std::optional<fabric::LinkRate> rate_token(std::string_view t, bool& bad) {
  bad = false;
  size_t i = 0;
  while (i < t.size() && i < 2 && LineCursor::is_digit(t[i])) ++i;
  if (i == 0 || t[0] == '0' || i + 4 > t.size() || (t[i] != 'x' && t[i] != 'X')) return std::nullopt;
  for (size_t j = i + 1; j < i + 4; ++j)
    if (t[j] < 'A' || t[j] > 'Z') return std::nullopt;
  for (size_t j = i + 4; j < t.size(); ++j)
    if (!LineCursor::is_digit(t[j])) return std::nullopt;
  std::string text(t);
  if (t.substr(i + 1) == "FDR10") text = std::string(t.substr(0, i + 1)) + "QDR";
  auto rate = fabric::LinkRate::parse(text);
  bad = !rate;
  return rate;
}

class Parser {
 public:
  explicit Parser(const std::string& file) : file_(file) {}

  void line(std::string_view text, size_t number) {
    line_ = number;
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
      text.remove_suffix(1);
    LineCursor c(text);
    c.skip_blanks();
    if (c.done()) {
      current_ = kNone;
      return;
    }
    if (c.peek() == '#') return;
    if (c.peek() == '[') {
      if (current_ == kNone) fail("port line outside a node block");
      port_line(c);
      return;
    }
    current_ = kNone;
    if (c.peek() == '@') fail("ibsim port aliases ('@') are not supported");
    const std::string_view word = c.word();
    if (word == "Switch") return header(NodeKind::Switch, c);
    if (word == "Ca" || word == "Hca") return header(NodeKind::Hca, c);
    if (word == "Rt") fail("routers (Rt) are not supported");
    if (word == "Chassis" || (word == "Hostname" && c.peek() == ':')) return;
    if (word == "include" || word == "do" || word == "module" || word == "width" ||
        word == "speed" || word == "pdebug")
      fail("unsupported ibsim directive '" + std::string(word) + "'");
    c.skip_blanks();
    if (!word.empty() && (c.peek() == '=' || c.peek() == '+')) return assignment(word, c);
    if (!word.empty() && LineCursor::is_digit(c.peek()))
      fail("unknown node type '" + std::string(word) + "'");
    fail("unrecognised line '" + excerpt(text) + "'");
  }

  Topology finish();

 private:
  [[noreturn]] void fail(std::string_view problem) const {
    throw TopologyError::at(file_, line_, problem);
  }

  // Allows only blanks and a '#' comment after the current position.
  void end_of_line(LineCursor& c) {
    c.skip_blanks();
    if (!c.done() && c.peek() != '#') fail("unexpected text '" + excerpt(c.rest()) + "'");
  }

  std::string_view quoted(LineCursor& c, const char* what) {
    bool unterminated = false;
    const auto q = c.quoted(unterminated);
    if (unterminated) fail(std::string("unterminated quote in ") + what);
    if (!q) fail(std::string("expected a quoted ") + what);
    return *q;
  }

  // "(hex)" after a port; nullopt when absent.
  std::optional<uint64_t> paren_guid(LineCursor& c) {
    if (!c.eat('(')) return std::nullopt;
    const auto g = c.hex(true);
    if (!g || !c.eat(')')) fail("bad GUID in parentheses");
    return g;
  }

  // "[ext N]" (ibnetdiscover -g), ignored.
  void skip_ext(LineCursor& c) {
    if (c.rest().substr(0, 5) != "[ext ") return;
    c.eat('[');
    c.word();
    c.skip_blanks();
    if (!c.decimal(UINT32_MAX) || !c.eat(']')) fail("bad [ext N] port mapping");
  }

  void assignment(std::string_view key, LineCursor& c);
  void header(NodeKind kind, LineCursor& c);
  void port_line(LineCursor& c);
  std::optional<fabric::LinkRate> comment_rate(std::string_view comment);

  const std::string& file_;
  size_t line_ = 0;
  GuidAllocator guids_;
  std::optional<uint64_t> sysimg_;
  std::optional<uint16_t> vendor_, device_;
  std::vector<RawNode> nodes_;
  std::vector<PortDecl> decls_;
  uint32_t current_ = kNone;
};

void Parser::assignment(std::string_view key, LineCursor& c) {
  if (c.peek() == '+') fail("relative GUID assignments ('" + std::string(key) + "+') are not supported");
  c.eat('=');
  c.skip_blanks();
  const auto value = c.number();
  if (!value) fail("bad number after '" + std::string(key) + "='");
  if (key == "vendid" || key == "devid") {
    if (*value > UINT16_MAX) fail(std::string(key) + " out of range (at most 0xffff)");
    (key == "vendid" ? vendor_ : device_) = static_cast<uint16_t>(*value);
  } else if (key == "sysimgguid") {
    sysimg_ = *value;
  } else if (key == "switchguid") {
    guids_.set_next(NodeKind::Switch, *value);
    paren_guid(c);
  } else if (key == "caguid" || key == "hcaguids") {
    guids_.set_next(NodeKind::Hca, *value);
  } else if (key != "rtguid") {
    fail("unknown setting '" + std::string(key) + "'");
  }
  end_of_line(c);
}

void Parser::header(NodeKind kind, LineCursor& c) {
  const bool sw = kind == NodeKind::Switch;
  const char* type = sw ? "switch" : "HCA";
  c.skip_blanks();
  if (!LineCursor::is_digit(c.peek())) fail(std::string("missing port count after node type"));
  const auto ports = c.decimal(UINT32_MAX);
  c.skip_blanks();
  const std::string name(quoted(c, "node name"));
  const unsigned max = sw ? kMaxSwitchPorts : kMaxHcaPorts;
  if (!ports || *ports > max)
    fail(std::string(type) + " '" + name + "' has too many ports (at most " + std::to_string(max) + ")");
  if (*ports == 0) fail(std::string(type) + " '" + name + "' has 0 ports");

  std::string desc;
  c.skip_blanks();
  if (c.eat('#')) {
    c.skip_blanks();
    if (c.peek() == '"') {
      desc = quoted(c, "node description");
    } else {
      std::string_view rest = c.rest();
      for (const std::string_view marker : {" enhanced port ", " base port ", " lid ", " lmc "})
        rest = rest.substr(0, rest.find(marker));
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
      desc = rest;
    }
  } else if (!c.done()) {
    fail("unexpected text '" + excerpt(c.rest()) + "' after node name");
  }

  RawNode raw;
  raw.line = line_;
  NodeDesc& d = raw.desc;
  d.kind = kind;
  d.name = name;
  d.description = std::move(desc);
  d.num_ports = static_cast<uint8_t>(*ports);
  d.node_guid = guids_.next(kind, d.num_ports);
  d.system_guid = sysimg_.value_or(0);
  sysimg_.reset();
  d.vendor_id = vendor_.value_or(kMellanoxVendorId);
  d.device_id = device_.value_or(sw ? kSwitchDeviceId : kHcaDeviceId);
  if (!sw) d.port_guids.assign(d.num_ports + 1u, 0);
  raw.decl.assign(d.num_ports + 1u, kNone);
  current_ = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(std::move(raw));
}

void Parser::port_line(LineCursor& c) {
  RawNode& node = nodes_[current_];
  const std::string& name = node.desc.name;
  c.eat('[');
  const auto port = c.decimal(UINT8_MAX);
  if (!port || !c.eat(']')) fail("bad port number, expected [N]");
  if (*port < 1 || *port > node.desc.num_ports)
    fail("port " + std::to_string(*port) + " of '" + name + "' is out of range (1.." +
         std::to_string(node.desc.num_ports) + ")");
  const auto p = static_cast<uint8_t>(*port);
  if (node.decl[p] != kNone)
    fail("port " + std::to_string(p) + " of '" + name + "' is declared twice (first at line " +
         std::to_string(decls_[node.decl[p]].line) + ")");
  skip_ext(c);
  if (const auto guid = paren_guid(c)) {
    if (*guid == 0) fail("port " + std::to_string(p) + " of '" + name + "' has a zero GUID");
    if (node.desc.kind == NodeKind::Hca) node.desc.port_guids[p] = *guid;
  }
  c.skip_blanks();
  PortDecl d;
  d.node = current_;
  d.port = p;
  d.line = line_;
  d.peer = quoted(c, "peer node name");
  d.peer_port = 1;
  if (c.eat('[')) {
    const auto q = c.decimal(UINT8_MAX);
    if (!q || !c.eat(']')) fail("bad peer port number, expected [N]");
    if (*q == 0) fail("peer port 0 cannot be cabled");
    d.peer_port = static_cast<uint8_t>(*q);
  }
  skip_ext(c);
  c.skip_blanks();
  paren_guid(c);
  end_of_line(c);
  if (c.eat('#')) d.rate = comment_rate(c.rest());
  node.decl[p] = static_cast<uint32_t>(decls_.size());
  decls_.push_back(std::move(d));
}

// The last NxSPEED token outside double quotes in a port line's comment.
std::optional<fabric::LinkRate> Parser::comment_rate(std::string_view comment) {
  std::optional<fabric::LinkRate> rate;
  bool in_quote = false;
  size_t start = 0;
  for (size_t i = 0; i <= comment.size(); ++i) {
    const char ch = i < comment.size() ? comment[i] : ' ';
    const bool sep = ch == ' ' || ch == '\t' || ch == '"';
    if (sep && !in_quote && i > start) {
      const std::string_view token = comment.substr(start, i - start);
      bool bad = false;
      if (auto r = rate_token(token, bad)) rate = r;
      else if (bad) fail("bad link rate '" + std::string(token) + "'");
    }
    if (ch == '"') in_quote = !in_quote;
    if (sep) start = i + 1;
  }
  return rate;
}

Topology Parser::finish() {
  if (nodes_.empty()) throw TopologyError(file_ + ": no nodes (a net file declares at least one Switch or Ca)");
  Topology t;
  t.reserve(nodes_.size());
  for (RawNode& raw : nodes_) {
    line_ = raw.line;
    NodeDesc& d = raw.desc;
    for (size_t p = 1; p < d.port_guids.size(); ++p)
      if (d.port_guids[p] == 0) d.port_guids[p] = d.node_guid + p;
    try {
      t.add_node(d);
    } catch (const TopologyError& e) {
      fail(e.what());
    }
  }
  for (uint32_t k = 0; k < decls_.size(); ++k) {
    const PortDecl& d = decls_[k];
    line_ = d.line;
    const PortRef here{d.node, d.port};
    const auto peer = t.find(d.peer);
    if (!peer) fail("link to undeclared node '" + d.peer + "'");
    const NodeDesc& pn = t.nodes()[*peer];
    if (d.peer_port > pn.num_ports)
      fail("port " + std::to_string(d.peer_port) + " of '" + pn.name + "' is out of range (1.." +
           std::to_string(pn.num_ports) + ")");
    const PortRef there{*peer, d.peer_port};
    if (here == there) fail("port " + t.port_name(here) + " is cabled to itself");
    const uint32_t other = nodes_[*peer].decl[d.peer_port];
    std::optional<fabric::LinkRate> rate = d.rate;
    if (other != kNone) {
      const PortDecl& o = decls_[other];
      if (o.peer != t.nodes()[d.node].name || o.peer_port != d.port) {
        line_ = std::max(d.line, o.line);
        fail("asymmetric link: line " + std::to_string(d.line) + " cables " + t.port_name(here) +
             " to " + t.port_name(there) + ", line " + std::to_string(o.line) + " cables " +
             t.port_name(there) + " to " + o.peer + "[" + std::to_string(o.peer_port) + "]");
      }
      if (other < k) continue;  // the link was made at `other`
      if (!rate) rate = o.rate;
    }
    try {
      t.connect(here, there, rate.value_or(kDefaultRate), kDefaultPropagation);
    } catch (const TopologyError& e) {
      fail(e.what());
    }
  }
  return t;
}

}  // namespace

Topology read_netfile(std::istream& in, const std::string& filename) {
  Parser parser(filename);
  std::string text;
  size_t number = 0;
  while (std::getline(in, text)) parser.line(text, ++number);
  if (in.bad()) throw TopologyError(filename + ": read error");
  return parser.finish();
}

}  // namespace ibfab::topo

#pragma once
// A shared library as the dynamic linker sees it, read with readelf: its
// SONAME, its version definitions and its defined dynamic symbols. For the
// ABI tests of the drop-in libraries (umad_abi_test, verbs_abi_test).
#include <array>
#include <cstddef>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ibfab::testing {

// One exported name and the version node it is bound at.
struct Export {
  const char* name;
  const char* node;
};

// The name -> node map of an export list, as DynamicSymbols::defaults holds
// them.
template <std::size_t N>
std::map<std::string, std::string> defaults_of(const Export (&exports)[N]) {
  std::map<std::string, std::string> defaults;
  for (const Export& e : exports) defaults[e.name] = e.node;
  return defaults;
}

// The nodes of a node -> parent map, as DynamicSymbols::unversioned holds
// them.
inline std::set<std::string> node_names_of(const std::map<std::string, std::string>& nodes) {
  std::set<std::string> names;
  for (const auto& [node, parent] : nodes) names.insert(node);
  return names;
}

// The standard output of a shell command ("" if it cannot run).
inline std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> chunk;
  std::size_t n;
  while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) out.append(chunk.data(), n);
  pclose(pipe);
  return out;
}

// The DT_SONAME of a library, "" if it has none.
inline std::string soname(const std::string& library) {
  const std::string dynamic = run("readelf -d '" + library + "'");
  const std::string tag = "Library soname: [";
  const auto at = dynamic.find(tag);
  if (at == std::string::npos) return "";
  const auto start = at + tag.size();
  return dynamic.substr(start, dynamic.find(']', start) - start);
}

// A library's defined (not LOCAL, not UND) dynamic symbols, from
// `readelf --dyn-syms -W`.
struct DynamicSymbols {
  std::map<std::string, std::string> defaults;             // name@@node: name -> node
  std::set<std::pair<std::string, std::string>> others;    // name@node, non-default versions
  std::set<std::string> unversioned;                       // the version nodes' own symbols
};

inline DynamicSymbols dynamic_symbols(const std::string& library) {
  DynamicSymbols symbols;
  std::istringstream lines(run("readelf --dyn-syms -W '" + library + "'"));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (num == "Num:" || num.back() != ':' || ndx == "UND" || bind == "LOCAL") continue;
    const auto at = name.find('@');
    if (at == std::string::npos)
      symbols.unversioned.insert(name);
    else if (name.compare(at, 2, "@@") == 0)
      symbols.defaults[name.substr(0, at)] = name.substr(at + 2);
    else
      symbols.others.emplace(name.substr(0, at), name.substr(at + 1));
  }
  return symbols;
}

// What differs between a library's default-version exports and the
// expected name -> node map: a name missing, at another node, or exported
// though not expected (a helper leaking out of -fvisibility=hidden or the
// version script). One message each; empty when they agree.
inline std::vector<std::string> export_mismatches(const DynamicSymbols& symbols,
                                                  const std::map<std::string, std::string>& expected) {
  std::vector<std::string> out;
  for (const auto& [name, node] : expected) {
    auto it = symbols.defaults.find(name);
    if (it == symbols.defaults.end()) out.push_back(name + "@@" + node + " is not exported");
    else if (it->second != node) out.push_back(name + " is at " + it->second + ", not " + node);
  }
  for (const auto& [name, node] : symbols.defaults)
    if (!expected.count(name)) out.push_back("unexpected export " + name + "@@" + node);
  return out;
}

// A library's version definitions, node -> the node it inherits from ("" for
// none), from `readelf -V`; the BASE entry (the file's own name) is left out.
inline std::map<std::string, std::string> version_definitions(const std::string& library) {
  std::map<std::string, std::string> nodes;
  std::istringstream lines(run("readelf -V -W '" + library + "'"));
  std::string current;
  bool in_definitions = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Version definition section") != std::string::npos) in_definitions = true;
    if (line.find("Version needs section") != std::string::npos) in_definitions = false;
    if (!in_definitions) continue;
    const auto name = line.find("Name: ");
    const auto parent = line.find("Parent 1: ");
    if (name != std::string::npos) {
      current = line.find("Flags: BASE") != std::string::npos ? "" : line.substr(name + 6);
      if (!current.empty()) nodes[current] = "";
    } else if (parent != std::string::npos && !current.empty()) {
      nodes[current] = line.substr(parent + 10);
    }
  }
  return nodes;
}

}  // namespace ibfab::testing

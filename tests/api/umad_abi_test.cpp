// The built libibumad.so.3 as programs see it: its SONAME, and each exported
// name under the version node rdma-core 44 gives it (binaries are linked
// BIND_NOW and bind name@node). Read with readelf, and checked by loading the
// library and asking for name@node.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace {

struct Export {
  const char* name;
  const char* node;
};

// Every name rdma-core 44's libibumad.so.3 exports, with its node (objdump
// -T of /usr/lib/x86_64-linux-gnu/libibumad.so.3).
constexpr Export kExports[] = {
    {"umad_addr_dump", "IBUMAD_1.0"},
    {"umad_attribute_str", "IBUMAD_1.0"},
    {"umad_class_str", "IBUMAD_1.0"},
    {"umad_close_port", "IBUMAD_1.0"},
    {"umad_common_mad_status_str", "IBUMAD_1.0"},
    {"umad_debug", "IBUMAD_1.0"},
    {"umad_done", "IBUMAD_1.0"},
    {"umad_dump", "IBUMAD_1.0"},
    {"umad_free_ca_device_list", "IBUMAD_1.1"},
    {"umad_get_ca", "IBUMAD_1.0"},
    {"umad_get_ca_device_list", "IBUMAD_1.1"},
    {"umad_get_ca_portguids", "IBUMAD_1.0"},
    {"umad_get_cas_names", "IBUMAD_1.0"},
    {"umad_get_fd", "IBUMAD_1.0"},
    {"umad_get_issm_path", "IBUMAD_1.0"},
    {"umad_get_mad", "IBUMAD_1.0"},
    {"umad_get_mad_addr", "IBUMAD_1.0"},
    {"umad_get_pkey", "IBUMAD_1.0"},
    {"umad_get_port", "IBUMAD_1.0"},
    {"umad_init", "IBUMAD_1.0"},
    {"umad_method_str", "IBUMAD_1.0"},
    {"umad_open_port", "IBUMAD_1.0"},
    {"umad_poll", "IBUMAD_1.0"},
    {"umad_recv", "IBUMAD_1.0"},
    {"umad_register", "IBUMAD_1.0"},
    {"umad_register2", "IBUMAD_1.0"},
    {"umad_register_oui", "IBUMAD_1.0"},
    {"umad_release_ca", "IBUMAD_1.0"},
    {"umad_release_port", "IBUMAD_1.0"},
    {"umad_sa_mad_status_str", "IBUMAD_1.0"},
    {"umad_send", "IBUMAD_1.0"},
    {"umad_set_addr", "IBUMAD_1.0"},
    {"umad_set_addr_net", "IBUMAD_1.0"},
    {"umad_set_grh", "IBUMAD_1.0"},
    {"umad_set_pkey", "IBUMAD_1.0"},
    {"umad_size", "IBUMAD_1.0"},
    {"umad_sort_ca_device_list", "IBUMAD_1.2"},
    {"umad_status", "IBUMAD_1.0"},
    {"umad_unregister", "IBUMAD_1.0"},
};

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> chunk;
  std::size_t n;
  while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) out.append(chunk.data(), n);
  pclose(pipe);
  return out;
}

// The defined dynamic symbols of a library, name -> version node, from
// `readelf --dyn-syms -W`. The nodes' own symbols (IBUMAD_1.0...) carry no
// version and map to "".
std::map<std::string, std::string> defined_symbols(const std::string& library) {
  std::map<std::string, std::string> symbols;
  std::istringstream lines(run("readelf --dyn-syms -W '" + library + "'"));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (num == "Num:" || num.back() != ':' || ndx == "UND" || bind == "LOCAL") continue;
    const auto at = name.find('@');
    if (at == std::string::npos) {
      symbols[name] = "";
    } else {
      const auto node = name.find_first_not_of('@', at);
      symbols[name.substr(0, at)] = name.substr(node);
    }
  }
  return symbols;
}

const std::set<std::string> kNodes = {"IBUMAD_1.0", "IBUMAD_1.1", "IBUMAD_1.2"};

TEST(UmadAbi, SonameIsLibibumadSo3) {
  const std::string dynamic = run("readelf -d '" IBFAB_UMAD_LIBRARY "'");
  EXPECT_NE(dynamic.find("Library soname: [libibumad.so.3]"), std::string::npos) << dynamic;
}

TEST(UmadAbi, ExportsEveryNameUnderItsNodeAndNothingElse) {
  const auto symbols = defined_symbols(IBFAB_UMAD_LIBRARY);
  ASSERT_FALSE(symbols.empty()) << "readelf gave nothing for " IBFAB_UMAD_LIBRARY;
  std::map<std::string, std::string> known;
  for (const Export& e : kExports) known[e.name] = e.node;

  for (const Export& e : kExports) {
    auto it = symbols.find(e.name);
    ASSERT_NE(it, symbols.end()) << e.name << " is not exported";
    EXPECT_EQ(it->second, e.node) << e.name;
  }

  // Every export is a libibumad name in its node, or a node itself: no
  // helper leaks out of -fvisibility=hidden or the version script.
  for (const auto& [name, node] : symbols) {
    if (kNodes.count(name) != 0) continue;
    ASSERT_EQ(known.count(name), 1u) << "unexpected export " << name << "@" << node;
    EXPECT_EQ(node, known.at(name)) << name;
  }
  for (const std::string& node : kNodes) EXPECT_EQ(symbols.count(node), 1u) << node << " not defined";
}

TEST(UmadAbi, TheListsAgreeWithRdmaCore) {
  if (std::string(IBFAB_SYSTEM_IBUMAD).empty()) GTEST_SKIP() << "rdma-core's libibumad.so.3 not found";
  std::map<std::string, std::string> expected;
  for (const Export& e : kExports) expected[e.name] = e.node;
  for (const std::string& node : kNodes) expected[node] = "";
  EXPECT_EQ(defined_symbols(IBFAB_SYSTEM_IBUMAD), expected);
}

TEST(UmadAbi, LoadsAndBindsNameAtNode) {
  void* handle = dlopen(IBFAB_UMAD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const Export& e : kExports) EXPECT_NE(dlvsym(handle, e.name, e.node), nullptr) << e.name << "@" << e.node;
  EXPECT_EQ(dlsym(handle, "umad_set_grh_net"), nullptr) << "rdma-core does not export it";
  dlclose(handle);
}

}  // namespace

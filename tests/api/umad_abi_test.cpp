// The built libibumad.so.3 as programs see it: its SONAME, and each exported
// name under the version node rdma-core 44 gives it (binaries are linked
// BIND_NOW and bind name@node). Read with readelf, and checked by loading the
// library and asking for name@node.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/api/library_symbols.h"

namespace {

using ibfab::testing::dynamic_symbols;
using ibfab::testing::Export;

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

const std::set<std::string> kNodes = {"IBUMAD_1.0", "IBUMAD_1.1", "IBUMAD_1.2"};

TEST(UmadAbi, SonameIsLibibumadSo3) {
  EXPECT_EQ(ibfab::testing::soname(IBFAB_UMAD_LIBRARY), "libibumad.so.3");
}

TEST(UmadAbi, ExportsEveryNameUnderItsNodeAndNothingElse) {
  const auto symbols = dynamic_symbols(IBFAB_UMAD_LIBRARY);
  ASSERT_FALSE(symbols.defaults.empty()) << "readelf gave nothing for " IBFAB_UMAD_LIBRARY;
  std::map<std::string, std::string> known;
  for (const Export& e : kExports) known[e.name] = e.node;

  for (const Export& e : kExports) {
    auto it = symbols.defaults.find(e.name);
    ASSERT_NE(it, symbols.defaults.end()) << e.name << " is not exported";
    EXPECT_EQ(it->second, e.node) << e.name;
  }

  // Every export is a libibumad name in its node, or a node itself: no
  // helper leaks out of -fvisibility=hidden or the version script.
  for (const auto& [name, node] : symbols.defaults) {
    ASSERT_EQ(known.count(name), 1u) << "unexpected export " << name << "@" << node;
    EXPECT_EQ(node, known.at(name)) << name;
  }
  EXPECT_TRUE(symbols.others.empty()) << "no non-default versions";
  EXPECT_EQ(symbols.unversioned, kNodes);
}

TEST(UmadAbi, TheListsAgreeWithRdmaCore) {
  if (std::string(IBFAB_SYSTEM_IBUMAD).empty()) GTEST_SKIP() << "rdma-core's libibumad.so.3 not found";
  std::map<std::string, std::string> expected;
  for (const Export& e : kExports) expected[e.name] = e.node;
  const auto real = dynamic_symbols(IBFAB_SYSTEM_IBUMAD);
  EXPECT_EQ(real.defaults, expected);
  EXPECT_TRUE(real.others.empty());
  EXPECT_EQ(real.unversioned, kNodes);
}

TEST(UmadAbi, LoadsAndBindsNameAtNode) {
  void* handle = dlopen(IBFAB_UMAD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const Export& e : kExports) EXPECT_NE(dlvsym(handle, e.name, e.node), nullptr) << e.name << "@" << e.node;
  EXPECT_EQ(dlsym(handle, "umad_set_grh_net"), nullptr) << "rdma-core does not export it";
  dlclose(handle);
}

}  // namespace

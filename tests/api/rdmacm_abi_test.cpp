// The built librdmacm.so.1 as programs see it: its SONAME, its version
// nodes and their chaining, and each exported name under the version node
// rdma-core 44 gives it (mckey, udaddy and perftest are linked BIND_NOW and
// bind name@node). Read with readelf, and checked by loading the library and
// asking for name@node.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/api/library_symbols.h"

namespace {

using ibfab::testing::dynamic_symbols;
using ibfab::testing::Export;
using ibfab::testing::version_definitions;

// Every name rdma-core 44's librdmacm.so.1 exports with a default (@@)
// version, with its node (objdump -T of
// /usr/lib/x86_64-linux-gnu/librdmacm.so.1).
constexpr Export kExports[] = {
    {"raccept", "RDMACM_1.0"},
    {"rbind", "RDMACM_1.0"},
    {"rclose", "RDMACM_1.0"},
    {"rconnect", "RDMACM_1.0"},
    {"rdma_accept", "RDMACM_1.0"},
    {"rdma_ack_cm_event", "RDMACM_1.0"},
    {"rdma_bind_addr", "RDMACM_1.0"},
    {"rdma_connect", "RDMACM_1.0"},
    {"rdma_create_ep", "RDMACM_1.0"},
    {"rdma_create_event_channel", "RDMACM_1.0"},
    {"rdma_create_id", "RDMACM_1.0"},
    {"rdma_create_qp", "RDMACM_1.0"},
    {"rdma_create_qp_ex", "RDMACM_1.0"},
    {"rdma_create_srq", "RDMACM_1.0"},
    {"rdma_create_srq_ex", "RDMACM_1.0"},
    {"rdma_destroy_ep", "RDMACM_1.0"},
    {"rdma_destroy_event_channel", "RDMACM_1.0"},
    {"rdma_destroy_id", "RDMACM_1.0"},
    {"rdma_destroy_qp", "RDMACM_1.0"},
    {"rdma_destroy_srq", "RDMACM_1.0"},
    {"rdma_disconnect", "RDMACM_1.0"},
    {"rdma_establish", "RDMACM_1.2"},
    {"rdma_event_str", "RDMACM_1.0"},
    {"rdma_free_devices", "RDMACM_1.0"},
    {"rdma_freeaddrinfo", "RDMACM_1.0"},
    {"rdma_get_cm_event", "RDMACM_1.0"},
    {"rdma_get_devices", "RDMACM_1.0"},
    {"rdma_get_dst_port", "RDMACM_1.0"},
    {"rdma_get_remote_ece", "RDMACM_1.3"},
    {"rdma_get_request", "RDMACM_1.0"},
    {"rdma_get_src_port", "RDMACM_1.0"},
    {"rdma_getaddrinfo", "RDMACM_1.0"},
    {"rdma_init_qp_attr", "RDMACM_1.2"},
    {"rdma_join_multicast", "RDMACM_1.0"},
    {"rdma_join_multicast_ex", "RDMACM_1.1"},
    {"rdma_leave_multicast", "RDMACM_1.0"},
    {"rdma_listen", "RDMACM_1.0"},
    {"rdma_migrate_id", "RDMACM_1.0"},
    {"rdma_notify", "RDMACM_1.0"},
    {"rdma_reject", "RDMACM_1.0"},
    {"rdma_reject_ece", "RDMACM_1.3"},
    {"rdma_resolve_addr", "RDMACM_1.0"},
    {"rdma_resolve_route", "RDMACM_1.0"},
    {"rdma_set_local_ece", "RDMACM_1.3"},
    {"rdma_set_option", "RDMACM_1.0"},
    {"rfcntl", "RDMACM_1.0"},
    {"rgetpeername", "RDMACM_1.0"},
    {"rgetsockname", "RDMACM_1.0"},
    {"rgetsockopt", "RDMACM_1.0"},
    {"riomap", "RDMACM_1.0"},
    {"riounmap", "RDMACM_1.0"},
    {"riowrite", "RDMACM_1.0"},
    {"rlisten", "RDMACM_1.0"},
    {"rpoll", "RDMACM_1.0"},
    {"rread", "RDMACM_1.0"},
    {"rreadv", "RDMACM_1.0"},
    {"rrecv", "RDMACM_1.0"},
    {"rrecvfrom", "RDMACM_1.0"},
    {"rrecvmsg", "RDMACM_1.0"},
    {"rselect", "RDMACM_1.0"},
    {"rsend", "RDMACM_1.0"},
    {"rsendmsg", "RDMACM_1.0"},
    {"rsendto", "RDMACM_1.0"},
    {"rsetsockopt", "RDMACM_1.0"},
    {"rshutdown", "RDMACM_1.0"},
    {"rsocket", "RDMACM_1.0"},
    {"rwrite", "RDMACM_1.0"},
    {"rwritev", "RDMACM_1.0"},
};

// Each version node and the node it inherits from ("" for none).
const std::map<std::string, std::string> kNodes = {
    {"RDMACM_1.0", ""},
    {"RDMACM_1.1", "RDMACM_1.0"},
    {"RDMACM_1.2", "RDMACM_1.1"},
    {"RDMACM_1.3", "RDMACM_1.2"},
};

std::map<std::string, std::string> expected_defaults() { return ibfab::testing::defaults_of(kExports); }

std::set<std::string> node_names() { return ibfab::testing::node_names_of(kNodes); }

TEST(RdmacmAbi, SonameIsLibrdmacmSo1) { EXPECT_EQ(ibfab::testing::soname(IBFAB_RDMACM_LIBRARY), "librdmacm.so.1"); }

// Like rdma-core's, the library needs libibverbs.so.1: a program that loads
// librdmacm from <build>/lib gets ibfab's verbs with it.
TEST(RdmacmAbi, NeedsLibibverbs) {
  const std::string dynamic = ibfab::testing::run("readelf -d '" IBFAB_RDMACM_LIBRARY "'");
  EXPECT_NE(dynamic.find("Shared library: [libibverbs.so.1]"), std::string::npos) << dynamic;
}

TEST(RdmacmAbi, DefinesEveryNodeChainedAsRdmaCore) { EXPECT_EQ(version_definitions(IBFAB_RDMACM_LIBRARY), kNodes); }

TEST(RdmacmAbi, ExportsEveryNameUnderItsNodeAndNothingElse) {
  const auto symbols = dynamic_symbols(IBFAB_RDMACM_LIBRARY);
  ASSERT_FALSE(symbols.defaults.empty()) << "readelf gave nothing for " IBFAB_RDMACM_LIBRARY;

  for (const std::string& m : ibfab::testing::export_mismatches(symbols, expected_defaults())) ADD_FAILURE() << m;
  EXPECT_TRUE(symbols.others.empty());
  EXPECT_EQ(symbols.unversioned, node_names());
}

TEST(RdmacmAbi, TheListsAgreeWithRdmaCore) {
  if (std::string(IBFAB_SYSTEM_RDMACM).empty()) GTEST_SKIP() << "rdma-core's librdmacm.so.1 not found";
  const auto real = dynamic_symbols(IBFAB_SYSTEM_RDMACM);
  EXPECT_EQ(real.defaults, expected_defaults());
  EXPECT_TRUE(real.others.empty());
  EXPECT_EQ(real.unversioned, node_names());
  EXPECT_EQ(version_definitions(IBFAB_SYSTEM_RDMACM), kNodes);
}

TEST(RdmacmAbi, LoadsAndBindsNameAtNode) {
  void* handle = dlopen(IBFAB_RDMACM_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const Export& e : kExports) EXPECT_NE(dlvsym(handle, e.name, e.node), nullptr) << e.name << "@" << e.node;
  dlclose(handle);
}

}  // namespace

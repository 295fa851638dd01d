// The built libibverbs.so.1 as programs see it: its SONAME, its version
// nodes and their chaining, and each exported name under the version node
// rdma-core 44 gives it (binaries and the real providers libmlx5/libefa are
// linked BIND_NOW and bind name@node). Read with readelf, checked by loading
// the library and asking for name@node, and by loading the real providers
// against it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "tests/api/library_symbols.h"

namespace {

using ibfab::testing::dynamic_symbols;
using ibfab::testing::Export;
using ibfab::testing::version_definitions;

// Every name rdma-core 44's libibverbs.so.1 exports with a default (@@)
// version, with its node (objdump -T of
// /usr/lib/x86_64-linux-gnu/libibverbs.so.1).
constexpr Export kExports[] = {
    {"__ioctl_final_num_attrs", "IBVERBS_PRIVATE_34"},
    {"__verbs_log", "IBVERBS_PRIVATE_34"},
    {"_ibv_query_gid_ex", "IBVERBS_1.11"},
    {"_ibv_query_gid_table", "IBVERBS_1.11"},
    {"_verbs_init_and_alloc_context", "IBVERBS_PRIVATE_34"},
    {"execute_ioctl", "IBVERBS_PRIVATE_34"},
    {"ibv_ack_async_event", "IBVERBS_1.1"},
    {"ibv_ack_cq_events", "IBVERBS_1.1"},
    {"ibv_alloc_pd", "IBVERBS_1.1"},
    {"ibv_attach_mcast", "IBVERBS_1.1"},
    {"ibv_close_device", "IBVERBS_1.1"},
    {"ibv_cmd_advise_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_alloc_dm", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_alloc_mw", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_alloc_pd", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_attach_mcast", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_close_xrcd", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_ah", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_counters", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_cq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_cq_ex", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_flow", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_flow_action_esp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_qp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_qp_ex", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_qp_ex2", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_rwq_ind_table", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_srq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_srq_ex", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_create_wq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_dealloc_mw", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_dealloc_pd", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_dereg_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_ah", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_counters", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_cq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_flow", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_flow_action", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_qp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_rwq_ind_table", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_srq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_destroy_wq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_detach_mcast", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_free_dm", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_get_context", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_modify_cq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_modify_flow_action_esp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_modify_qp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_modify_qp_ex", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_modify_srq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_modify_wq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_open_qp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_open_xrcd", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_poll_cq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_post_recv", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_post_send", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_post_srq_recv", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_query_context", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_query_device_any", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_query_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_query_port", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_query_qp", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_query_srq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_read_counters", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_reg_dm_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_reg_dmabuf_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_reg_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_req_notify_cq", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_rereg_mr", "IBVERBS_PRIVATE_34"},
    {"ibv_cmd_resize_cq", "IBVERBS_PRIVATE_34"},
    {"ibv_copy_ah_attr_from_kern", "IBVERBS_1.1"},
    {"ibv_copy_path_rec_from_kern", "IBVERBS_1.0"},
    {"ibv_copy_path_rec_to_kern", "IBVERBS_1.0"},
    {"ibv_copy_qp_attr_from_kern", "IBVERBS_1.0"},
    {"ibv_create_ah", "IBVERBS_1.1"},
    {"ibv_create_ah_from_wc", "IBVERBS_1.1"},
    {"ibv_create_comp_channel", "IBVERBS_1.0"},
    {"ibv_create_cq", "IBVERBS_1.1"},
    {"ibv_create_qp", "IBVERBS_1.1"},
    {"ibv_create_srq", "IBVERBS_1.1"},
    {"ibv_dealloc_pd", "IBVERBS_1.1"},
    {"ibv_dereg_mr", "IBVERBS_1.1"},
    {"ibv_destroy_ah", "IBVERBS_1.1"},
    {"ibv_destroy_comp_channel", "IBVERBS_1.0"},
    {"ibv_destroy_cq", "IBVERBS_1.1"},
    {"ibv_destroy_qp", "IBVERBS_1.1"},
    {"ibv_destroy_srq", "IBVERBS_1.1"},
    {"ibv_detach_mcast", "IBVERBS_1.1"},
    {"ibv_dofork_range", "IBVERBS_1.1"},
    {"ibv_dontfork_range", "IBVERBS_1.1"},
    {"ibv_event_type_str", "IBVERBS_1.1"},
    {"ibv_fork_init", "IBVERBS_1.1"},
    {"ibv_free_device_list", "IBVERBS_1.1"},
    {"ibv_get_async_event", "IBVERBS_1.1"},
    {"ibv_get_cq_event", "IBVERBS_1.1"},
    {"ibv_get_device_guid", "IBVERBS_1.1"},
    {"ibv_get_device_index", "IBVERBS_1.9"},
    {"ibv_get_device_list", "IBVERBS_1.1"},
    {"ibv_get_device_name", "IBVERBS_1.1"},
    {"ibv_get_pkey_index", "IBVERBS_1.5"},
    {"ibv_get_sysfs_path", "IBVERBS_1.0"},
    {"ibv_import_device", "IBVERBS_1.10"},
    {"ibv_import_dm", "IBVERBS_1.13"},
    {"ibv_import_mr", "IBVERBS_1.10"},
    {"ibv_import_pd", "IBVERBS_1.10"},
    {"ibv_init_ah_from_wc", "IBVERBS_1.1"},
    {"ibv_is_fork_initialized", "IBVERBS_1.13"},
    {"ibv_modify_qp", "IBVERBS_1.1"},
    {"ibv_modify_srq", "IBVERBS_1.1"},
    {"ibv_node_type_str", "IBVERBS_1.1"},
    {"ibv_open_device", "IBVERBS_1.1"},
    {"ibv_port_state_str", "IBVERBS_1.1"},
    {"ibv_qp_to_qp_ex", "IBVERBS_1.6"},
    {"ibv_query_device", "IBVERBS_1.1"},
    {"ibv_query_ece", "IBVERBS_1.10"},
    {"ibv_query_gid", "IBVERBS_1.1"},
    {"ibv_query_gid_type", "IBVERBS_PRIVATE_34"},
    {"ibv_query_pkey", "IBVERBS_1.1"},
    {"ibv_query_port", "IBVERBS_1.1"},
    {"ibv_query_qp", "IBVERBS_1.1"},
    {"ibv_query_qp_data_in_order", "IBVERBS_1.14"},
    {"ibv_query_srq", "IBVERBS_1.1"},
    {"ibv_rate_to_mbps", "IBVERBS_1.1"},
    {"ibv_rate_to_mult", "IBVERBS_1.0"},
    {"ibv_read_ibdev_sysfs_file", "IBVERBS_PRIVATE_34"},
    {"ibv_read_sysfs_file", "IBVERBS_1.0"},
    {"ibv_reg_dmabuf_mr", "IBVERBS_1.12"},
    {"ibv_reg_mr", "IBVERBS_1.1"},
    {"ibv_reg_mr_iova", "IBVERBS_1.7"},
    {"ibv_reg_mr_iova2", "IBVERBS_1.8"},
    {"ibv_rereg_mr", "IBVERBS_1.1"},
    {"ibv_resize_cq", "IBVERBS_1.1"},
    {"ibv_resolve_eth_l2_from_gid", "IBVERBS_1.1"},
    {"ibv_set_ece", "IBVERBS_1.10"},
    {"ibv_unimport_dm", "IBVERBS_1.13"},
    {"ibv_unimport_mr", "IBVERBS_1.10"},
    {"ibv_unimport_pd", "IBVERBS_1.10"},
    {"ibv_wc_status_str", "IBVERBS_1.1"},
    {"mbps_to_ibv_rate", "IBVERBS_1.1"},
    {"mult_to_ibv_rate", "IBVERBS_1.0"},
    {"verbs_allow_disassociate_destroy", "IBVERBS_PRIVATE_34"},
    {"verbs_init_cq", "IBVERBS_PRIVATE_34"},
    {"verbs_open_device", "IBVERBS_PRIVATE_34"},
    {"verbs_register_driver_34", "IBVERBS_PRIVATE_34"},
    {"verbs_set_ops", "IBVERBS_PRIVATE_34"},
    {"verbs_uninit_context", "IBVERBS_PRIVATE_34"},
};

// Non-default versions ibfab keeps: ibv_register_driver@IBVERBS_1.1, which
// old binaries still bind. rdma-core also has 33 name@IBVERBS_1.0 aliases
// for programs linked before 1.1; ibfab does not reproduce them.
constexpr Export kCompat[] = {
    {"ibv_register_driver", "IBVERBS_1.1"},
};

// Each version node and the node it inherits from ("" for none).
const std::map<std::string, std::string> kNodes = {
    {"IBVERBS_1.0", ""},
    {"IBVERBS_1.1", "IBVERBS_1.0"},
    {"IBVERBS_1.5", "IBVERBS_1.1"},
    {"IBVERBS_1.6", "IBVERBS_1.5"},
    {"IBVERBS_1.7", "IBVERBS_1.6"},
    {"IBVERBS_1.8", "IBVERBS_1.7"},
    {"IBVERBS_1.9", "IBVERBS_1.8"},
    {"IBVERBS_1.10", "IBVERBS_1.9"},
    {"IBVERBS_1.11", "IBVERBS_1.10"},
    {"IBVERBS_1.12", "IBVERBS_1.11"},
    {"IBVERBS_1.13", "IBVERBS_1.12"},
    {"IBVERBS_1.14", "IBVERBS_1.13"},
    {"IBVERBS_PRIVATE_34", ""},
};

std::map<std::string, std::string> expected_defaults() { return ibfab::testing::defaults_of(kExports); }

std::set<std::string> node_names() { return ibfab::testing::node_names_of(kNodes); }

TEST(VerbsAbi, SonameIsLibibverbsSo1) {
  EXPECT_EQ(ibfab::testing::soname(IBFAB_VERBS_LIBRARY), "libibverbs.so.1");
}

TEST(VerbsAbi, DefinesEveryNodeChainedAsRdmaCore) {
  EXPECT_EQ(version_definitions(IBFAB_VERBS_LIBRARY), kNodes);
}

TEST(VerbsAbi, ExportsEveryNameUnderItsNodeAndNothingElse) {
  const auto symbols = dynamic_symbols(IBFAB_VERBS_LIBRARY);
  ASSERT_FALSE(symbols.defaults.empty()) << "readelf gave nothing for " IBFAB_VERBS_LIBRARY;

  for (const std::string& m : ibfab::testing::export_mismatches(symbols, expected_defaults())) ADD_FAILURE() << m;

  std::set<std::pair<std::string, std::string>> compat;
  for (const Export& e : kCompat) compat.emplace(e.name, e.node);
  EXPECT_EQ(symbols.others, compat);
  EXPECT_EQ(symbols.unversioned, node_names());
}

TEST(VerbsAbi, TheListsAgreeWithRdmaCore) {
  if (std::string(IBFAB_SYSTEM_IBVERBS).empty()) GTEST_SKIP() << "rdma-core's libibverbs.so.1 not found";
  const auto real = dynamic_symbols(IBFAB_SYSTEM_IBVERBS);
  EXPECT_EQ(real.defaults, expected_defaults());
  EXPECT_EQ(real.unversioned, node_names());
  for (const Export& e : kCompat) EXPECT_EQ(real.others.count({e.name, e.node}), 1u) << e.name << "@" << e.node;
  EXPECT_EQ(version_definitions(IBFAB_SYSTEM_IBVERBS), kNodes);
}

TEST(VerbsAbi, LoadsAndBindsNameAtNode) {
  void* handle = dlopen(IBFAB_VERBS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const Export& e : kExports) EXPECT_NE(dlvsym(handle, e.name, e.node), nullptr) << e.name << "@" << e.node;
  for (const Export& e : kCompat) EXPECT_NE(dlvsym(handle, e.name, e.node), nullptr) << e.name << "@" << e.node;
  // A compatibility version is for old binaries only: a plain lookup, like a
  // new link, does not find it.
  EXPECT_EQ(dlsym(handle, "ibv_register_driver"), nullptr);
  dlclose(handle);
}

// Every kernel command of the provider interface fails with EOPNOTSUPP. The
// commands read none of their arguments, so each is called with eleven null
// ones (the most any takes; x86-64 callers clean up after extra arguments).
using Command = int (*)(void*, void*, void*, void*, void*, void*, void*, void*, void*, void*, void*);

// The call through a type that is not the command's own, on purpose: UBSan's
// function check is off here only.
#if defined(__clang__)
[[clang::no_sanitize("function")]]
#endif
int call_with_nulls(Command command) {
  return command(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
}

TEST(VerbsAbi, EveryKernelCommandFailsWithEopnotsupp) {
  void* handle = dlopen(IBFAB_VERBS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  int commands = 0;
  for (const Export& e : kExports) {
    const std::string name = e.name;
    if (name.rfind("ibv_cmd_", 0) != 0 && name != "execute_ioctl") continue;
    void* symbol = dlvsym(handle, e.name, e.node);
    if (symbol == nullptr) {
      ADD_FAILURE() << name << " is not exported";
      continue;
    }
    Command command = nullptr;
    std::memcpy(&command, &symbol, sizeof command);
    EXPECT_EQ(call_with_nulls(command), EOPNOTSUPP) << name;
    ++commands;
  }
  EXPECT_EQ(commands, 60);
  dlclose(handle);
}

// ib_send_bw and ib_send_lat load the real libmlx5.so.1 and libefa.so.1,
// which need 62 IBVERBS_PRIVATE_34 names (BIND_NOW) and whose constructors
// register themselves. With ibfab's library loaded first, their
// libibverbs.so.1 dependency is ibfab's (same SONAME), and they must load.
TEST(VerbsAbi, RealProvidersLoadAgainstIt) {
  void* verbs = dlopen(IBFAB_VERBS_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(verbs, nullptr) << dlerror();
  int found = 0;
  for (const char* provider : {"libmlx5.so.1", "libefa.so.1"}) {
    const std::string path = std::string(IBFAB_SYSTEM_LIBDIR) + "/" + provider;
    if (access(path.c_str(), R_OK) != 0) continue;
    ++found;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle, nullptr) << dlerror();
    if (handle != nullptr) dlclose(handle);
  }
  if (!std::string(IBFAB_SYSTEM_IBVERBS).empty())
    EXPECT_EQ(dlopen(IBFAB_SYSTEM_IBVERBS, RTLD_NOW | RTLD_NOLOAD), nullptr) << "rdma-core's library was loaded";
  dlclose(verbs);
  if (found == 0) GTEST_SKIP() << "no rdma-core provider in " IBFAB_SYSTEM_LIBDIR;
}

}  // namespace

// The files `ibfab exec` shows a program of its host (tools/cli/
// device_tree.h), made from a snapshot and read back: the kernel's formats,
// file by file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/cli/device_tree.h"

namespace ibfab::cli {
namespace {

namespace fs = std::filesystem;

// H3's HCA with four ports of different states and rates.
HostSnapshot four_ports() {
  HostSnapshot h;
  h.node.node_guid = 0x0002c90200000005ull;
  h.node.system_image_guid = 0x0002c90200000005ull;
  std::snprintf(h.node.name, sizeof h.node.name, "H3");
  h.node.num_ports = 4;
  struct Rate {
    uint8_t width, speed;
  };
  const Rate rates[] = {{2, 32}, {1, 1}, {8, 4}, {2, 64}};  // 4X EDR, 1X SDR, 12X QDR, 4X HDR
  for (uint8_t i = 0; i < 4; ++i) {
    api::PortRecord& p = h.node.ports[i];
    p.number = static_cast<uint8_t>(i + 1);
    p.state = i == 0 ? 4 : 1;
    p.phys_state = i == 0 ? 5 : 2;
    p.lid = i == 0 ? 3 : 0;
    p.sm_lid = i == 0 ? 1 : 0;
    p.lmc = i == 0 ? 2 : 0;
    p.active_width = rates[i].width;
    p.active_speed = rates[i].speed;
    p.capability_mask = 0x0211c808;
    p.gid_prefix = 0xfe80000000000000ull;
    p.port_guid = 0x0002c90200000006ull + i;
    p.pkey_count = 2;
    p.pkeys[0] = 0xFFFF;
    p.pkeys[1] = 0x8001;
  }
  h.addresses.resize(4);
  return h;
}

class DeviceTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ibfab-device-tree-test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = dir;
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string read(const std::string& rel) const {
    std::ifstream f(root_ + "/" + rel);
    if (!f) return "<missing " + rel + ">";
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  std::string dev(const std::string& rel) const { return read("class/infiniband/ibfab0/" + rel); }
  std::string root_;
};

TEST_F(DeviceTree, NodeFilesInTheKernelsFormat) {
  write_device_tree(root_, four_ports(), false);
  EXPECT_EQ(dev("node_guid"), "0002:c902:0000:0005\n");
  EXPECT_EQ(dev("sys_image_guid"), "0002:c902:0000:0005\n");
  EXPECT_EQ(dev("node_type"), "1: CA\n");
  EXPECT_EQ(dev("node_desc"), "H3\n");
  EXPECT_EQ(dev("fw_ver"), "1.0.0\n");
  EXPECT_EQ(dev("hw_rev"), "0\n");
  EXPECT_EQ(dev("board_id"), "IBFAB_0001\n");
}

TEST_F(DeviceTree, PortFilesAsTheSmConfiguredThem) {
  write_device_tree(root_, four_ports(), false);
  EXPECT_EQ(dev("ports/1/state"), "4: ACTIVE\n");
  EXPECT_EQ(dev("ports/1/phys_state"), "5: LinkUp\n");
  EXPECT_EQ(dev("ports/1/lid"), "0x3\n");
  EXPECT_EQ(dev("ports/1/sm_lid"), "0x1\n");
  EXPECT_EQ(dev("ports/1/lid_mask_count"), "2\n");
  EXPECT_EQ(dev("ports/1/sm_sl"), "0\n");
  EXPECT_EQ(dev("ports/1/link_layer"), "InfiniBand\n");
  EXPECT_EQ(dev("ports/1/cap_mask"), "0x0211c808\n");
  EXPECT_EQ(dev("ports/2/state"), "1: DOWN\n");
  EXPECT_EQ(dev("ports/2/phys_state"), "2: Polling\n");
  EXPECT_EQ(dev("ports/2/lid"), "0x0\n");
}

TEST_F(DeviceTree, RatesAreWidthTimesLaneSpeed) {
  write_device_tree(root_, four_ports(), false);
  EXPECT_EQ(dev("ports/1/rate"), "100 Gb/sec (4X EDR)\n");
  EXPECT_EQ(dev("ports/2/rate"), "2.5 Gb/sec (1X SDR)\n");
  EXPECT_EQ(dev("ports/3/rate"), "120 Gb/sec (12X QDR)\n");
  EXPECT_EQ(dev("ports/4/rate"), "200 Gb/sec (4X HDR)\n");
}

TEST_F(DeviceTree, GidsAndPkeysAsTheirTablesHoldThem) {
  write_device_tree(root_, four_ports(), false);
  EXPECT_EQ(dev("ports/1/gids/0"), "fe80:0000:0000:0000:0002:c902:0000:0006\n");
  EXPECT_EQ(dev("ports/2/gids/0"), "fe80:0000:0000:0000:0002:c902:0000:0007\n");
  EXPECT_FALSE(fs::exists(root_ + "/class/infiniband/ibfab0/ports/1/gids/1"));  // gid_tbl_len 1
  EXPECT_EQ(dev("ports/1/gid_attrs/types/0"), "IB/RoCE v1\n");
  EXPECT_EQ(dev("ports/1/pkeys/0"), "0xffff\n");
  EXPECT_EQ(dev("ports/1/pkeys/1"), "0x8001\n");
  EXPECT_EQ(dev("ports/1/pkeys/127"), "0x0000\n");
  EXPECT_FALSE(fs::exists(root_ + "/class/infiniband/ibfab0/ports/1/pkeys/128"));
}

TEST_F(DeviceTree, EachPortHasItsIpoibInterface) {
  write_device_tree(root_, four_ports(), false);
  for (unsigned p = 1; p <= 4; ++p) {
    const fs::path link = root_ + "/class/infiniband/ibfab0/device/net/" + ipoib_interface(p);
    ASSERT_TRUE(fs::is_symlink(link)) << link;
    EXPECT_EQ(fs::read_symlink(link), "/sys/class/net/ib" + std::to_string(p - 1));
  }
}

TEST_F(DeviceTree, VerbsAndMadClassesNameTheDeviceAndPort) {
  write_device_tree(root_, four_ports(), false);
  EXPECT_EQ(read("class/infiniband_verbs/abi_version"), "6\n");
  EXPECT_EQ(read("class/infiniband_verbs/uverbs0/ibdev"), "ibfab0\n");
  EXPECT_EQ(read("class/infiniband_verbs/uverbs0/dev"), "231:192\n");
  EXPECT_EQ(read("class/infiniband_mad/abi_version"), "5\n");
  for (unsigned p = 1; p <= 4; ++p) {
    const std::string n = std::to_string(p - 1);
    EXPECT_EQ(read("class/infiniband_mad/umad" + n + "/ibdev"), "ibfab0\n");
    EXPECT_EQ(read("class/infiniband_mad/umad" + n + "/port"), std::to_string(p) + "\n");
    EXPECT_EQ(read("class/infiniband_mad/umad" + n + "/dev"), "231:" + n + "\n");
    EXPECT_EQ(read("class/infiniband_mad/issm" + n + "/port"), std::to_string(p) + "\n");
    EXPECT_EQ(read("class/infiniband_mad/issm" + n + "/dev"), "231:" + std::to_string(64 + p - 1) + "\n");
  }
}

TEST_F(DeviceTree, WithoutDeviceNodesTheDevFilesAreEmptyRegularFiles) {
  write_device_tree(root_, four_ports(), false);
  for (const char* name : {"uverbs0", "rdma_cm", "umad0", "umad3", "issm0", "issm3"}) {
    const fs::path f = root_ + "/dev/infiniband/" + name;
    EXPECT_TRUE(fs::is_regular_file(f)) << f;
  }
  EXPECT_FALSE(fs::exists(root_ + "/dev/infiniband/umad4"));
}

TEST_F(DeviceTree, DeviceNodesHaveTheKernelsNumbersAndModes) {
  if (::geteuid() != 0) GTEST_SKIP() << "making device nodes needs root";
  write_device_tree(root_, four_ports(), true);
  struct Want {
    const char* name;
    unsigned major, minor;
    mode_t mode;
  };
  for (const Want& w : {Want{"uverbs0", 231, 192, 0666}, Want{"umad0", 231, 0, 0600}, Want{"umad3", 231, 3, 0600},
                        Want{"issm1", 231, 65, 0600}, Want{"rdma_cm", 10, 254, 0666}}) {
    struct stat st{};
    ASSERT_EQ(::stat((root_ + "/dev/infiniband/" + w.name).c_str(), &st), 0) << w.name;
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << w.name;
    EXPECT_EQ(major(st.st_rdev), w.major) << w.name;
    EXPECT_EQ(minor(st.st_rdev), w.minor) << w.name;
    EXPECT_EQ(st.st_mode & 07777, w.mode) << w.name;
  }
}

}  // namespace
}  // namespace ibfab::cli

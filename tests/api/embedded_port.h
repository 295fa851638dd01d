#pragma once
// A test fixture: this process on host H3 of an in-process fat-tree:2:4
// (IBFAB_TOPOLOGY, the built-in SM on H1), with a umad port opened through
// the built libibumad.so.3 for each test.
#include <gtest/gtest.h>
#include <infiniband/umad.h>

#include <cstdint>
#include <cstdlib>

namespace ibfab::testing {

class EmbeddedPort : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("IBFAB_TOPOLOGY", "fat-tree:2:4", 1);
    ::setenv("IBFAB_NODE", "H3", 1);
  }
  void SetUp() override {
    fd_ = umad_open_port(nullptr, 0);
    ASSERT_GE(fd_, 0);
    umad_port_t p;
    ASSERT_EQ(umad_get_port(nullptr, 0, &p), 0);
    sm_lid_ = static_cast<uint16_t>(p.sm_lid);
    umad_release_port(&p);
  }
  void TearDown() override { umad_close_port(fd_); }

  int fd_ = -1;
  uint16_t sm_lid_ = 0;
};

}  // namespace ibfab::testing

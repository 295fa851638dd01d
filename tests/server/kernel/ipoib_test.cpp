// ipoib's broadcast group (api/server/kernel/ipoib.h): every Active port
// joins it at bring-up.
#include <gtest/gtest.h>

#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

TEST_F(CmService, EveryActivePortJoinsItsIpoibBroadcastGroupAtBringUp) {
  EXPECT_EQ(sa_members(kBroadcast), 8u);  // fat-tree:2:4 has 8 hosts
  EXPECT_EQ(sa_member(kBroadcast, "H5"), 0x1);
}

}  // namespace
}  // namespace ibfab::api::cm_test

// Bad queries get the status OpenSM 3.3.23 gives them (or, where OpenSM
// drops them, no answer), and the SA goes on answering.
#include <gtest/gtest.h>

#include <initializer_list>

#include "fabric/mad/sa/link_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/pkey_table_record.h"
#include "fabric/mad/sa/service_record.h"
#include "tests/sm/sa_on_fabric.h"

namespace ibfab::sm {
namespace {

using testing::Mad;
using testing::SaClient;
using testing::SaOnFabric;
namespace method = wire::mad_method;
namespace st = wire::mad_status;

struct SaBadQueries : SaOnFabric {
  // The SA still answers a plain query.
  void expect_alive() {
    const auto a = query(method::kGetTable, 0, mad::NodeRecord{});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, st::kOk);
    EXPECT_GT(a->count(), 0u);
  }
  std::optional<testing::SaAnswer> raw(Mad m) { return testing::ask(*client, m); }
};

TEST_F(SaBadQueries, MethodsAnAttributeDoesNotTakeAre0x000C) {
  EXPECT_EQ(query(method::kSet, 0, mad::LinkRecord{})->status, st::kMethodAttrUnsupported);
  EXPECT_EQ(query(method::kDelete, 0, mad::NodeRecord{})->status, st::kMethodAttrUnsupported);
  EXPECT_EQ(query(method::kGetMulti, 0, mad::PathRecord{})->status, st::kMethodAttrUnsupported);
  expect_alive();
}

TEST_F(SaBadQueries, WhatOpenSmDropsIsNotAnswered) {
  // TraceRecord: OpenSM's SA does not dispatch it.
  Mad trace = SaClient::make(method::kGet, 0, mad::PathRecord{});
  wire::store_be16(&trace[16], 0x0039);
  EXPECT_FALSE(raw(trace)) << "TraceRecord";
  // GetTraceTable: no agent takes the method.
  Mad gtt = SaClient::make(method::kGetTraceTable, 0, mad::PathRecord{});
  EXPECT_FALSE(raw(gtt)) << "GetTraceTable";
  // Notice: sent in Reports, not dispatched as a request.
  Mad notice = SaClient::make(method::kGet, 0, mad::NodeRecord{});
  wire::store_be16(&notice[16], 0x0002);
  EXPECT_FALSE(raw(notice)) << "Notice";
  // An attribute ID no SA knows.
  Mad unknown = SaClient::make(method::kGet, 0, mad::NodeRecord{});
  wire::store_be16(&unknown[16], 0x00AB);
  EXPECT_FALSE(raw(unknown)) << "unknown attribute";
  // An SM_Key that is neither 0 nor the SA's.
  EXPECT_FALSE(query(method::kGet, 0, mad::NodeRecord{}, 0x1234)) << "wrong SM_Key";
  expect_alive();
}

TEST_F(SaBadQueries, UntrustedPKeyTableRecordIs0x0200) {
  EXPECT_EQ(query(method::kGetTable, 0, mad::PKeyTableRecord{})->status, st::kSaReqInvalid);
  expect_alive();
}

TEST_F(SaBadQueries, EmptyTablesAndMasksMatchingNothing) {
  // GetTable of a table with no record: success, AttributeOffset 0.
  const auto services = query(method::kGetTable, 0, mad::ServiceRecord{});
  ASSERT_TRUE(services);
  EXPECT_EQ(services->status, st::kOk);
  EXPECT_EQ(services->attr_offset, 0);
  EXPECT_EQ(services->count(), 0u);
  // Get of the same: 0x0300.
  EXPECT_EQ(query(method::kGet, 0, mad::ServiceRecord{})->status, st::kSaNoRecords);
  // Every ComponentMask bit set over an all-ones record matches nothing.
  Mad ones = SaClient::make(method::kGetTable, ~uint64_t{0}, mad::NodeRecord{});
  std::fill(ones.begin() + mad::kSaDataOffset, ones.end(), uint8_t{0xFF});
  const auto none = raw(ones);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, st::kOk);
  EXPECT_EQ(none->count(), 0u);
  for (const uint16_t attr : std::initializer_list<uint16_t>{0x0011, 0x0012, 0x0014, 0x0015, 0x0017, 0x0018, 0x0020, 0x0030, 0x0031, 0x00F3}) {
    Mad m = ones;
    wire::store_be16(&m[16], attr);
    const auto a = raw(m);
    ASSERT_TRUE(a) << std::hex << attr;
    EXPECT_EQ(a->status, st::kOk) << std::hex << attr;
  }
  expect_alive();
}

}  // namespace
}  // namespace ibfab::sm

// What clients register with the SA and read back: ServiceRecords (Set with
// a lease, Delete, Get/GetTable; sm/sa/service_table.h) and the
// InformInfoRecords listing InformInfo subscriptions, over QP1 of a fabric
// the SM brought up.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fabric/mad/notice.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/inform_info_record.h"
#include "fabric/mad/sa/service_record.h"
#include "tests/sm/sa_on_fabric.h"

namespace ibfab::sm {
namespace {

using testing::SaOnFabric;
namespace method = wire::mad_method;
namespace st = wire::mad_status;
namespace sr = mad::sr_comp;

constexpr uint64_t kSaKey = 1;  // SaOptions::sa_key

struct SaRegistrations : SaOnFabric {
  mad::ServiceRecord service(uint64_t id, int host, const char* name) const {
    mad::ServiceRecord r;
    r.service_id = id;
    r.service_gid = wire::Gid::from(sm.subnet().prefix, h(host).port(1).guid());
    std::memcpy(r.service_name.data(), name, std::strlen(name));
    r.service_key[0] = 0xAB;
    r.data32[2] = 0x12345678;
    return r;
  }
};

TEST_F(SaRegistrations, ServiceSetGetDelete) {
  const mad::ServiceRecord a = service(0x1000, 2, "alpha");
  auto set = query(method::kSet, sr::kServiceId | sr::kServiceGid | sr::kServiceName, a);
  ASSERT_TRUE(set);
  ASSERT_EQ(set->status, st::kOk);
  EXPECT_EQ(set->method, method::kGetResp);
  const auto answered = set->record<mad::ServiceRecord>(0);
  EXPECT_EQ(answered.service_p_key, 0xFFFF) << "unmasked ServiceP_Key answers as the default";
  EXPECT_EQ(answered.service_lease, mad::kServiceLeaseInfinite) << "unmasked lease is infinite";
  EXPECT_EQ(answered.service_key[0], 0) << "ServiceKey hidden from an untrusted requester";
  ASSERT_EQ(query(method::kSet, sr::kServiceId | sr::kServiceGid, service(0x2000, 3, "beta"))->status, st::kOk);

  auto all = query(method::kGetTable, 0, mad::ServiceRecord{});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->count(), 2u);
  EXPECT_EQ(all->record<mad::ServiceRecord>(0).service_id, 0x2000u) << "newest first";
  EXPECT_EQ(all->record<mad::ServiceRecord>(1).data32[2], 0x12345678u);

  mad::ServiceRecord by_name;
  std::memcpy(by_name.service_name.data(), "alpha", 5);
  auto one = query(method::kGet, sr::kServiceName, by_name);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, st::kOk);
  EXPECT_EQ(one->record<mad::ServiceRecord>(0).service_id, 0x1000u);
  auto trusted = query(method::kGet, sr::kServiceName, by_name, kSaKey);
  ASSERT_TRUE(trusted);
  EXPECT_EQ(trusted->record<mad::ServiceRecord>(0).service_key[0], 0xAB) << "trusted: ServiceKey shown";
  mad::ServiceRecord by_data = by_name;
  by_data.data32[2] = 0x12345679;
  auto none = query(method::kGet, sr::kServiceName | (uint64_t{1} << (sr::kData32First + 2)), by_data);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, st::kSaNoRecords);
  EXPECT_EQ(query(method::kGet, 0, mad::ServiceRecord{})->status, st::kSaTooManyRecords);

  auto del = query(method::kDelete, sr::kServiceId | sr::kServiceGid, a);
  ASSERT_TRUE(del);
  ASSERT_EQ(del->status, st::kOk);
  EXPECT_EQ(del->method, method::kDeleteResp);
  EXPECT_EQ(del->record<mad::ServiceRecord>(0).service_id, 0x1000u);
  EXPECT_EQ(query(method::kDelete, sr::kServiceId | sr::kServiceGid, a)->status, st::kSaNoRecords);
  EXPECT_EQ(query(method::kGetTable, 0, mad::ServiceRecord{})->count(), 1u);
}

TEST_F(SaRegistrations, ServiceSetNeedsIdAndGidAndAHeldPKey) {
  mad::ServiceRecord r = service(0x3000, 2, "gamma");
  EXPECT_EQ(query(method::kSet, sr::kServiceId, r)->status, st::kSaReqInvalid);
  r.service_p_key = 0x7123;  // a partition nobody holds
  EXPECT_EQ(query(method::kSet, sr::kServiceId | sr::kServiceGid | sr::kServicePKey, r)->status,
            st::kSaReqInvalid);
  r.service_p_key = 0xFFFF;
  r.service_gid = wire::Gid::from(sm.subnet().prefix, 0xDEAD);  // no such port
  EXPECT_EQ(query(method::kSet, sr::kServiceId | sr::kServiceGid | sr::kServicePKey, r)->status,
            st::kSaReqInvalid);
}

TEST_F(SaRegistrations, ServiceLeaseExpiresInSimulatedTime) {
  mad::ServiceRecord r = service(0x4000, 2, "leased");
  r.service_lease = 3;
  ASSERT_EQ(query(method::kSet, sr::kServiceId | sr::kServiceGid | sr::kServiceLease, r)->status, st::kOk);
  sim.run_until(sim.now() + sim::Time::s(2));
  EXPECT_EQ(query(method::kGetTable, 0, mad::ServiceRecord{})->count(), 1u) << "2 s into a 3 s lease";
  // A Set of the same record renews it.
  ASSERT_EQ(query(method::kSet, sr::kServiceId | sr::kServiceGid | sr::kServiceLease, r)->status, st::kOk);
  sim.run_until(sim.now() + sim::Time::s(2));
  EXPECT_EQ(query(method::kGetTable, 0, mad::ServiceRecord{})->count(), 1u) << "renewed";
  sim.run_until(sim.now() + sim::Time::s(2));
  EXPECT_EQ(query(method::kGetTable, 0, mad::ServiceRecord{})->count(), 0u) << "lease over";
}

TEST_F(SaRegistrations, InformInfoRecordsListSubscriptions) {
  mad::InformInfo ii = testing::trap_subscription(mad::trap_number::kMcGroupCreated);
  ASSERT_EQ(query(method::kSet, 0, ii)->status, st::kOk);
  ii.trap_number = mad::trap_number::kMcGroupDeleted;
  ASSERT_EQ(query(method::kSet, 0, ii)->status, st::kOk);

  auto a = query(method::kGetTable, 0, mad::InformInfoRecord{});
  ASSERT_TRUE(a);
  ASSERT_EQ(a->count(), 2u);
  const wire::Gid mine = wire::Gid::from(sm.subnet().prefix, h(2).port(1).guid());
  const auto r0 = a->record<mad::InformInfoRecord>(0);
  EXPECT_EQ(r0.subscriber_gid, mine);
  EXPECT_EQ(r0.subscriber_enum, 0);
  EXPECT_EQ(r0.inform_info.trap_number, mad::trap_number::kMcGroupCreated);
  EXPECT_EQ(r0.inform_info.qpn, 0u) << "QPN hidden from an untrusted requester";
  auto t = query(method::kGetTable, 0, mad::InformInfoRecord{}, kSaKey);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->record<mad::InformInfoRecord>(1).inform_info.qpn, 1u) << "trusted: the subscriber's QP";

  mad::InformInfoRecord q;
  q.subscriber_gid = wire::Gid::from(sm.subnet().prefix, h(3).port(1).guid());
  auto other = query(method::kGetTable, mad::iir_comp::kSubscriberGid, q);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->count(), 0u);
  EXPECT_EQ(query(method::kSet, 0, mad::InformInfoRecord{})->status, st::kMethodAttrUnsupported);
}

}  // namespace
}  // namespace ibfab::sm

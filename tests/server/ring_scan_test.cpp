// RingScan (api/server/ring_scan.h): which objects' rings the engine looks
// at in a round, with few objects and with many.
#include "api/server/ring_scan.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace ibfab::api {
namespace {

struct Object {
  int work = 0;    // rounds of work left
  int looked = 0;  // times looked at
};

// Looks at an object: takes one round of its work, if it has any.
bool look(Object& o) {
  ++o.looked;
  if (o.work == 0) return false;
  --o.work;
  return true;
}

using Scan = RingScan<Object>;

TEST(RingScan, WithFewObjectsEveryOneIsLookedAtEveryRound) {
  std::vector<Object> objects(Scan::kSlice);
  Scan scan;
  for (Object& o : objects) scan.add(&o);
  objects[3].work = 1;
  EXPECT_TRUE(scan.run(look));
  EXPECT_FALSE(scan.run(look));
  for (const Object& o : objects) EXPECT_EQ(o.looked, 2);
}

TEST(RingScan, WithManyAnIdleObjectIsSeenWithinItsTurnAndAnActiveOneEveryRound) {
  constexpr std::size_t kObjects = 10 * Scan::kSlice;
  std::vector<Object> objects(kObjects);
  Scan scan;
  for (Object& o : objects) scan.add(&o);
  for (std::size_t round = 0; round < kObjects / Scan::kSlice; ++round) scan.run(look);
  for (const Object& o : objects) EXPECT_EQ(o.looked, 1) << "each seen once in size/kSlice rounds";
  // Work appears on an object just looked at: seen within one turn; from
  // then on it is looked at every round while it has work.
  Object& busy = objects[Scan::kSlice - 1];
  busy.work = 100;
  int rounds = 0;
  while (busy.work == 100 && rounds < 100) {
    scan.run(look);
    ++rounds;
  }
  EXPECT_LE(rounds, static_cast<int>(kObjects / Scan::kSlice));
  const int before = busy.looked;
  for (int i = 0; i < 50; ++i) scan.run(look);
  EXPECT_EQ(busy.looked, before + 50);
  EXPECT_EQ(busy.work, 100 - 1 - 50);
}

TEST(RingScan, AnActiveObjectQuietForLongGoesBackToItsTurn) {
  std::vector<Object> objects(2 * Scan::kSlice);
  Scan scan;
  for (Object& o : objects) scan.add(&o);
  Object& o = objects[0];
  o.work = 1;
  scan.run(look);  // found with work: active
  const int start = o.looked;
  for (uint32_t i = 0; i < Scan::kQuietRounds; ++i) scan.run(look);
  EXPECT_GE(o.looked - start, static_cast<int>(Scan::kQuietRounds));
  const int quiet = o.looked;
  for (int i = 0; i < 100; ++i) scan.run(look);
  // 100 rounds, once a turn of 2 rounds (once more if it left the active
  // ones in a round whose slice then reached it).
  EXPECT_GE(o.looked - quiet, 50);
  EXPECT_LE(o.looked - quiet, 51);
}

TEST(RingScan, RunAllLooksAtEveryOneAndRemovingKeepsTheOthers) {
  std::vector<Object> objects(3 * Scan::kSlice);
  Scan scan;
  for (Object& o : objects) scan.add(&o);
  objects[5].work = objects[150].work = 1000;
  EXPECT_TRUE(scan.run_all(look));
  for (const Object& o : objects) EXPECT_EQ(o.looked, 1);
  scan.remove(&objects[5]);
  scan.remove(&objects[0]);
  EXPECT_EQ(scan.size(), objects.size() - 2);
  const int was5 = objects[5].looked, was150 = objects[150].looked;
  scan.run(look);
  EXPECT_EQ(objects[5].looked, was5) << "removed";
  EXPECT_EQ(objects[150].looked, was150 + 1) << "still active after the last object took a removed one's place";
  scan.remove(&objects[150]);
  scan.remove(&objects[150]);  // twice: nothing
  EXPECT_EQ(scan.size(), objects.size() - 3);
}

}  // namespace
}  // namespace ibfab::api

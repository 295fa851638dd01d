// The partitions.conf reader (OpenSM 3.3.23's syntax) and the P_Key tables
// and groups a configuration gives, as OpenSM's pkey manager lays them out.
#include "sm/partitions/partition_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <unistd.h>

#include "sm/partitions/pkey_assignment.h"

namespace ibfab::sm::partitions {
namespace {

PartitionConfig read(const std::string& text) { return read_partitions(text, "p.conf"); }

std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const PartitionError& e) {
    return e.what();
  }
  return "(no error)";
}

const Partition& at(const PartitionConfig& c, uint16_t pkey) { return c.partitions.at(pkey); }

TEST(PartitionReader, NoFileIsDefaultFullWithIpoib) {
  const PartitionConfig c = default_partitions();
  ASSERT_EQ(c.partitions.size(), 1u);
  const Partition& d = at(c, 0x7FFF);
  EXPECT_EQ(d.name, "Default");
  ASSERT_EQ(d.members.size(), 2u);
  EXPECT_EQ(d.members[0].kind, Member::Kind::All);
  EXPECT_EQ(d.members[0].membership, Membership::Full);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].mgid.str(), "ff12:401b:ffff::ffff:ffff");
  EXPECT_EQ(d.groups[0].q_key, 0x0B1Bu);
  EXPECT_FALSE(c.from_file);
}

TEST(PartitionReader, AFileMakesDefaultLimitedWithoutGroups) {
  const PartitionConfig c = read("# nothing but a comment\n");
  const Partition& d = at(c, 0x7FFF);
  EXPECT_EQ(d.members[0].membership, Membership::Limited);
  EXPECT_EQ(d.members[1].kind, Member::Kind::Self);
  EXPECT_EQ(d.members[1].membership, Membership::Full);
  EXPECT_TRUE(d.groups.empty());
  EXPECT_TRUE(c.from_file);
}

TEST(PartitionReader, DefinitionsFlagsAndMembers) {
  const PartitionConfig c = read(
      "Default=0x7fff, ipoib : ALL=full ;\n"
      "TenantA = 0x8001, ipoib, defmember=full, mtu=5, rate=7, sl=3 : 0x0002c90300000001, 0x2c90300000002=limited;\n"
      "TenantB=0x0002:\n"
      "   0x0002c90300000003 ,   # first host\n"
      "   SELF=both\n"
      ";\n");
  ASSERT_EQ(c.partitions.size(), 3u);
  const Partition& a = at(c, 0x0001);
  EXPECT_EQ(a.name, "TenantA");
  ASSERT_EQ(a.members.size(), 2u);
  EXPECT_EQ(a.members[0].guid, 0x0002c90300000001u);
  EXPECT_EQ(a.members[0].membership, Membership::Full);  // defmember=full
  EXPECT_EQ(a.members[1].membership, Membership::Limited);
  EXPECT_EQ(a.members[1].line, 2u);
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].mgid.str(), "ff12:401b:8001::ffff:ffff");
  EXPECT_EQ(a.groups[0].p_key, 0x8001);
  EXPECT_EQ(a.groups[0].mtu, 5);
  EXPECT_EQ(a.groups[0].rate, 7);
  EXPECT_EQ(a.groups[0].sl, 0);  // no QoS: OpenSM uses the default SL
  const Partition& b = at(c, 0x0002);
  ASSERT_EQ(b.members.size(), 2u);
  EXPECT_EQ(b.members[0].membership, Membership::Limited);  // the default
  EXPECT_EQ(b.members[0].line, 4u);
  EXPECT_EQ(b.members[1].kind, Member::Kind::Self);
  EXPECT_EQ(b.members[1].membership, Membership::Both);
  EXPECT_TRUE(b.groups.empty());
  // Default merged: its implicit members first, then the file's.
  EXPECT_EQ(at(c, 0x7FFF).members.back().membership, Membership::Full);
  EXPECT_EQ(at(c, 0x7FFF).groups.size(), 1u);
}

TEST(PartitionReader, AbbreviationsAndGeneratedPKeys) {
  const PartitionConfig c = read(
      "P1, ipo, defm=f : A ; P2 : ALL_C=l ; P1 : S=fu ; 0x10 : ALL_S ;\n");
  // P1 gets 1, P2 gets 2; the second P1 joins the first by name.
  EXPECT_EQ(at(c, 1).name, "P1");
  ASSERT_EQ(at(c, 1).members.size(), 2u);
  EXPECT_EQ(at(c, 1).members[0].kind, Member::Kind::All);
  EXPECT_EQ(at(c, 1).members[0].membership, Membership::Full);
  EXPECT_EQ(at(c, 1).members[1].kind, Member::Kind::Self);
  EXPECT_EQ(at(c, 2).members[0].kind, Member::Kind::AllCas);
  EXPECT_EQ(at(c, 0x10).name, "0010");
  EXPECT_EQ(at(c, 0x10).members[0].kind, Member::Kind::AllSwitches);
}

TEST(PartitionReader, MulticastGroupLines) {
  const PartitionConfig c = read(
      "Default=0x7fff,ipoib:\n"
      "  mgid=ff12:401b::0707,sl=1   # an IPv4 group\n"
      "  mgid=ff15::1,Q_Key=0xDEADBEEF,mtu=2,scope=2,scope=5\n"
      "  ALL=full;\n");
  const Partition& d = at(c, 0x7FFF);
  ASSERT_EQ(d.groups.size(), 4u);
  EXPECT_EQ(d.groups[1].mgid.str(), "ff12:401b:ffff::707");  // P_Key bits filled in
  EXPECT_EQ(d.groups[1].q_key, 0x0B1Bu);
  EXPECT_EQ(d.groups[1].sl, 1);
  EXPECT_EQ(d.groups[2].mgid.str(), "ff12::1");
  EXPECT_EQ(d.groups[3].mgid.str(), "ff15::1");
  EXPECT_EQ(d.groups[3].q_key, 0xDEADBEEFu);
  EXPECT_EQ(d.groups[3].mtu, 2);
  EXPECT_EQ(d.members.back().line, 4u);
}

TEST(PartitionReader, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("\n\nfoo bar;\n"), "p.conf:3: no partition definition found (expected 'Name=PKey[,flags]: members;')");
  EXPECT_EQ(error_of("A=0x8001: 0xzz;"), "p.conf:1: bad PortGUID '0xzz'");
  EXPECT_EQ(error_of("A=0x8001:\n 0x1=maybe;"), "p.conf:2: unrecognized port flag 'maybe' (full, limited or both)");
  EXPECT_EQ(error_of("A=0x18001: ALL;"), "p.conf:1: bad partition definition: P_Key '0x18001' is not a number up to 0xffff");
  EXPECT_EQ(error_of("A=0x8000: ALL;"), "p.conf:1: bad partition definition: P_Key '0x8000' has base 0");
  EXPECT_EQ(error_of("A=1,,ipoib: ALL;"), "p.conf:1: bad partition flags: an empty flag");
  EXPECT_EQ(error_of("A=1,colour=red: ALL;"), "p.conf:1: unrecognized partition flag 'colour'");
  EXPECT_EQ(error_of("A=1,mtu=9: ALL;"), "p.conf:1: flag 'mtu' requires a value from 1 to 5");
  EXPECT_EQ(error_of("A=1,defmember: ALL;"), "p.conf:1: flag 'defmember' requires a value (full, limited or both)");
  EXPECT_EQ(error_of("A=1: mgid=10.0.0.1;"), "p.conf:1: mgid \"10.0.0.1\": gid is not multicast");
  EXPECT_EQ(error_of("A=1,ipoib:\n mgid=ff12:401b:0005::1\n;"),
            "p.conf:2: IP multicast group ff12:401b:5::1 has P_Key bits 0x0005, not the partition's 0x0001");
  EXPECT_EQ(error_of("A=1,ipoib:\n mgid=ff12:401b::1,rate=6\n;"),
            "p.conf:2: IP multicast group ff12:401b::1 has a rate other than its partition's");
  EXPECT_EQ(error_of("A=1: mgid=ff12::1,bogus=1;"), "p.conf:1: unrecognized mgroup flag 'bogus'");
  EXPECT_EQ(error_of(std::string("A=1: ALL;\0", 10)), "p.conf: holds a NUL byte (not a text file)");
}

TEST(PartitionReader, LoadRefusesWhatIsNotARegularFile) {
  EXPECT_THROW(load_partitions("/nonexistent/partitions.conf"), PartitionError);
  try {
    load_partitions("/dev/null");
    FAIL();
  } catch (const PartitionError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("/dev/null: ", 0), 0u) << m;
    EXPECT_NE(m.find("not a regular file"), std::string::npos) << m;
  }
  char name[] = "/tmp/ibfab-partitions-XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << "T=0x8005: ALL=full;\nbroken\n";
  try {
    load_partitions(name);
    FAIL();
  } catch (const PartitionError& e) {
    EXPECT_EQ(std::string(e.what()), std::string(name) + ":2: no partition definition found (expected 'Name=PKey[,flags]: members;')");
  }
  unlink(name);
}

// Ports: the SM's CA port, two hosts, a switch.
constexpr uint64_t kSm = 0x10, kH1 = 0x11, kH2 = 0x12, kSw = 0x20;
const std::vector<EndPortRef> kPorts = {{kSm, 1, 128}, {kH1, 1, 128}, {kH2, 1, 128}, {kSw, 2, 32}};

std::vector<uint16_t> head(const std::vector<uint16_t>& t, std::size_t n) { return {t.begin(), t.begin() + n}; }

TEST(PKeyAssignment, NoFileGivesEveryPortFullDefault) {
  const auto t = assign_pkeys(default_partitions(), kPorts, kSm);
  for (std::size_t i = 0; i < kPorts.size(); ++i) {
    ASSERT_EQ(t[i].size(), kPorts[i].partition_cap);
    EXPECT_EQ(head(t[i], 2), (std::vector<uint16_t>{0xFFFF, 0}));
  }
}

TEST(PKeyAssignment, TenantsDefaultAtIndexZeroOthersInOpenSmOrder) {
  const auto c = read(
      "A=0x0100: 0x11=full;\n"   // byte-swapped key 0x0001: first
      "B=0x0001: 0x11, 0x12=full;\n"  // key 0x0100: second
      "C=0x8003: ALL_SWITCHES=full;\n");
  const auto t = assign_pkeys(c, kPorts, kSm);
  EXPECT_EQ(head(t[0], 2), (std::vector<uint16_t>{0xFFFF, 0}));             // SELF full in Default
  EXPECT_EQ(head(t[1], 4), (std::vector<uint16_t>{0x7FFF, 0x8100, 0x0001, 0}));
  EXPECT_EQ(head(t[2], 3), (std::vector<uint16_t>{0x7FFF, 0x8001, 0}));
  EXPECT_EQ(head(t[3], 3), (std::vector<uint16_t>{0x7FFF, 0x8003, 0}));
}

TEST(PKeyAssignment, LaterMentionWinsAndIndx0MovesDefault) {
  const auto c = read(
      "Default=0x7fff: ALL=full, 0x12=limited;\n"
      "T=0x0005, indx0: 0x12=full;\n"
      "GHOST=0x0006: 0x99=full;\n");  // not in the subnet: ignored
  const auto t = assign_pkeys(c, kPorts, kSm);
  EXPECT_EQ(head(t[1], 2), (std::vector<uint16_t>{0xFFFF, 0}));
  EXPECT_EQ(head(t[2], 3), (std::vector<uint16_t>{0x8005, 0x7FFF, 0}));
}

TEST(PKeyAssignment, EntriesBeyondPartitionCapAreDropped) {
  const auto c = read("A=1: 0x20=full; B=2: 0x20=full;");
  const std::vector<EndPortRef> small = {{kSw, 2, 2}};
  const auto t = assign_pkeys(c, small, kSm);
  EXPECT_EQ(t[0], (std::vector<uint16_t>{0x7FFF, 0x8001}));
}

TEST(PKeyAssignment, WellKnownGroupsAreTheSaRecords) {
  // In the order the file makes them, as OpenSM gives their MLIDs.
  const auto g = well_known_groups(read("T=0x8002,ipoib,scope=5: ALL; Default=0x7fff,ipoib: ALL=full;"));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].mgid.str(), "ff15:401b:8002::ffff:ffff");
  EXPECT_EQ(g[0].p_key, 0x8002);
  EXPECT_EQ(g[0].hop_limit, 0xFF);
  EXPECT_EQ(g[0].scope, 5);
  EXPECT_EQ(g[1].mgid.str(), "ff12:401b:ffff::ffff:ffff");
  EXPECT_EQ(g[1].hop_limit, 0);
  EXPECT_EQ(g[1].mtu, 4);
  EXPECT_EQ(g[1].rate, 3);
  const auto h = well_known_groups(read("Default=0x7fff,ipoib: ALL=full; T=0x8002,ipoib: ALL;"));
  EXPECT_EQ(h[0].mgid.str(), "ff12:401b:ffff::ffff:ffff");
}

}  // namespace
}  // namespace ibfab::sm::partitions

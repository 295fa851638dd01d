// `ibfab launch`'s program list: the words of its command line, hosts and
// addresses resolved against a fabric, programs looked up on PATH.
#include "tools/launch/launch_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/topology/topology_spec.h"

namespace ibfab::launch {
namespace {

using Words = std::vector<std::string>;

std::string error_of(const Words& words) {
  try {
    parse_programs(words);
  } catch (const LaunchError& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchPlan, ProgramsAreSplitAtLoneColonsAndKeepTheirOwnWords) {
  const auto p = parse_programs({"H1", "--ready-line", "Waiting for", "ib_send_bw", "-d", "ibfab0", ":", "H2",
                                 "--exit", "3", "sh", "-c", "echo a:b : c", "--ready-port", "1"});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].host, "H1");
  EXPECT_EQ(p[0].ready_line, "Waiting for");
  EXPECT_EQ(p[0].argv, (Words{"ib_send_bw", "-d", "ibfab0"}));
  EXPECT_EQ(p[1].host, "H2");
  EXPECT_EQ(p[1].expect_exit, 3);
  EXPECT_EQ(p[1].ready_port, 0);  // after the program: its own argument
  EXPECT_EQ(p[1].argv, (Words{"sh", "-c", "echo a:b : c", "--ready-port", "1"}));
}

TEST(LaunchPlan, OptionsOfOneProgram) {
  const auto p = parse_programs({"H3", "--ready-port", "18515", "--background", "server"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].ready_port, 18515);
  EXPECT_TRUE(p[0].background);
  EXPECT_EQ(p[0].expect_exit, 0);
  EXPECT_TRUE(p[0].ready_line.empty());
}

TEST(LaunchPlan, BadWordsSayWhichProgramAndWhy) {
  EXPECT_NE(error_of({}).find("no programs"), std::string::npos);
  EXPECT_NE(error_of({"H1", "a", ":", ":", "H2", "b"}).find("program 2: nothing between"), std::string::npos);
  EXPECT_NE(error_of({"H1", "a", ":"}).find("program 2: nothing between"), std::string::npos);
  EXPECT_NE(error_of({"--ready-line", "x", "prog"}).find("where a host was expected"), std::string::npos);
  EXPECT_NE(error_of({"H1"}).find("H1: no program to run"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--ready-line"}).find("H1: --ready-line needs a value"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--ready-line", "", "p"}).find("non-empty"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--ready-port", "0", "p"}).find("no TCP port"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--ready-port", "65536", "p"}).find("no TCP port"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--ready-port", "12x", "p"}).find("no TCP port"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--exit", "256", "p"}).find("no exit status"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--exit", "-1", "p"}).find("no exit status"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--retry", "p"}).find("H1: unknown option '--retry'"), std::string::npos);
  EXPECT_NE(error_of({"H1", "--ready-line", "x", "--ready-port", "5", "p"}).find("both given"), std::string::npos);
}

TEST(LaunchPlan, HostsAreCheckedAndBracedHostsBecomeAddresses) {
  const topo::Topology t = topo::load_topology("fat-tree:2:4");
  const topo::AddressPlan plan(t, {});
  auto p = parse_programs({"H2", "client", "{H1}", "--to={H8}:18515", "{H1:1}", "{S1}", "{x}", "{H1", "}{H3}"});
  resolve_hosts(p, t, plan);
  EXPECT_EQ(p[0].argv, (Words{"client", "10.1.0.1", "--to=10.1.0.8:18515", "10.1.0.1", "{S1}", "{x}", "{H1",
                              "}10.1.0.3"}));

  const auto error = [&](const Words& w) {
    auto programs = parse_programs(w);
    try {
      resolve_hosts(programs, t, plan);
    } catch (const LaunchError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error({"H9", "p"}), "H9: no such host in the fabric");
  EXPECT_EQ(error({"H1", "p", ":", "S1", "p"}), "S1: a switch, not a host");
  EXPECT_NE(error({"H1", "p", "{H2:2}"}).find("H2 has no port 2"), std::string::npos);
  EXPECT_NE(error({"H1", "p", "{H2:x}"}).find("no such port number"), std::string::npos);
}

TEST(LaunchPlan, ProgramsAreFoundAsExecvpWouldFindThem) {
  EXPECT_EQ(find_program("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(find_program("sh", "/nonexistent"), "");
  EXPECT_EQ(find_program("/bin/sh", ""), "/bin/sh");
  EXPECT_EQ(find_program("/bin", "/usr/bin"), "");  // a directory
  EXPECT_EQ(find_program("/etc/passwd", ""), "");   // not executable
  EXPECT_EQ(find_program("", "/bin"), "");
}

}  // namespace
}  // namespace ibfab::launch

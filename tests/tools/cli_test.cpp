// The ibfab command as a user runs it: output, exit status, error lines,
// files it writes. IBFAB_BINARY is the built binary.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

Result sh(const std::string& cmd) {
  Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

Result ibfab(const std::string& args) { return sh(std::string(IBFAB_BINARY) + " " + args); }

std::string tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A program (`ibfab serve` here) run in the background, its stdout and
// stderr read through a pipe; stopped with SIGTERM when it goes out of scope.
class Background {
 public:
  // `env` ("NAME=VALUE", or "-NAME" to unset) applies to the child only.
  explicit Background(std::vector<std::string> argv, const std::vector<std::string>& env = {}) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      for (const std::string& e : env) {
        if (e[0] == '-') ::unsetenv(e.c_str() + 1);
        else ::putenv(const_cast<char*>(e.c_str()));
      }
      std::vector<char*> a;
      for (std::string& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execvp(a[0], a.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Background() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // What it printed up to its "ready" line, or all of it if it ended or 60
  // s passed first.
  std::string until_ready() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (fd_ >= 0 && out_.find("ready\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      std::array<char, 4096> buf;
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n <= 0) break;
      out_.append(buf.data(), static_cast<std::size_t>(n));
    }
    return out_;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string out_;
};

// Starts `ibfab serve ARGS` on a private socket and returns what it printed
// up to its "ready" line (Background::until_ready); then stops it.
std::string serve_until_ready(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {IBFAB_BINARY, "serve", "--socket", tmp("serve-" + std::to_string(::getpid()) + ".sock")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Background(argv).until_ready();
}


TEST(Cli, TopoShowPrintsTheCountsOfA3LevelFatTree) {
  const Result r = ibfab("topo show fat-tree:3:36");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("hosts     11664\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("switches  1620\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("links     34992 (11664 host, 23328 switch-to-switch)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("diameter  6 hops"), std::string::npos) << r.out;
}

TEST(Cli, BadSpecsAreOneLineAndExitTwo) {
  for (const char* spec : {"fat-tree:3:35", "fat-tree:4:8", "ring:0", "torus:3", "mesh:9", "fat-tree:2:70"}) {
    const Result r = ibfab(std::string("topo show ") + spec);
    EXPECT_EQ(r.status, 2) << spec;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_NE(r.out.find(spec), std::string::npos) << "the message names the spec: " << r.out;
  }
}

TEST(Cli, ValidateRefusesBadInputWithOneLineAndExitTwo) {
  const std::string scenario = std::string(IBFAB_SOURCE_DIR) + "/scenarios/validate/multicast.yaml";
  const std::string junk = tmp("not-records.jsonl");
  write(junk, "{\"step\":0,\"host\":\"H1\"}\nthis is no record\n");
  const std::string empty = tmp("no-summary.jsonl");
  write(empty, "");
  struct Case {
    std::string args, says;
  } cases[] = {
      {"validate " + scenario, "needs the real run: --passthrough MAP or --real FILE"},
      {"validate " + scenario + " --real " + junk, junk + ":2: not a JSON object"},
      {"validate " + scenario + " --real " + empty, empty + ": no summary line: not a whole run"},
      {"validate " + scenario + " --real /nonexistent.jsonl", "/nonexistent.jsonl"},
      {"validate " + scenario + " --passthrough H1=rxe0 --real " + junk, "excludes"},
      {"validate " + scenario + " --passthrough H1=no_such_device,H2=no_such_device,H3=no_such_device",
       "the real run: ibfab-passthrough: H1: device 'no_such_device' does not exist"},
  };
  for (const Case& c : cases) {
    const Result r = ibfab(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(Cli, TopoGenWritesANetFileThatLoadsBack) {
  const std::string net = tmp("ft.net");
  ASSERT_EQ(ibfab("topo gen fat-tree:2:8 -o " + net).status, 0);
  const Result from_file = ibfab("topo show " + net);
  const Result from_spec = ibfab("topo show fat-tree:2:8");
  ASSERT_EQ(from_file.status, 0) << from_file.out;
  // Everything but the first line (which names the source) is the same.
  EXPECT_EQ(from_file.out.substr(from_file.out.find('\n')), from_spec.out.substr(from_spec.out.find('\n')));
}

TEST(Cli, AMalformedNetFileNamesFileAndLine) {
  const std::string net = tmp("bad.net");
  write(net, "Switch 4 \"S1\"\n[1] \"H1\"[1]\n[9] \"H2\"[1]\n\nHca 1 \"H1\"\n[1] \"S1\"[1]\n");
  const Result r = ibfab("topo show " + net);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("ibfab: " + net + ":3: ", 0), 0u) << r.out;
}

TEST(Cli, TopoDotIsAGraph) {
  const Result r = ibfab("topo dot ring:3");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("graph"), std::string::npos);
  EXPECT_NE(r.out.find("\"S1\""), std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* cmd : {"--help", "topo --help", "topo gen --help", "topo show --help", "topo dot --help",
                          "run --help"}) {
    const Result r = ibfab(cmd);
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd;
  }
  EXPECT_EQ(ibfab("").status, 2);
  EXPECT_EQ(ibfab("frobnicate").status, 2);
  EXPECT_EQ(ibfab("run").status, 2);
}

TEST(Cli, RunReportsAndChecksTheGoldenFingerprint) {
  const std::string s = tmp("fp.yaml");
  write(s, "topology: ring:3\nduration: 1ms\nactions:\n  - {at: 0, probe: H1}\n");
  Result r = ibfab("run " + s);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("probe      from H1"), std::string::npos);
  EXPECT_NE(r.out.find("[matches the fabric]"), std::string::npos);

  r = ibfab("run --update " + s);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(s);
  std::stringstream text;
  text << in.rdbuf();
  const auto at = text.str().find("fingerprint: ");
  ASSERT_NE(at, std::string::npos) << "--update wrote the fingerprint";
  const std::string fp = text.str().substr(at + 13, 16);

  r = ibfab("run " + s);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find(fp + "  [matches the scenario]"), std::string::npos) << r.out;

  std::string tampered = text.str();
  tampered.replace(at + 13, 16, "0000000000000000");
  write(s, tampered);
  r = ibfab("run " + s);
  EXPECT_EQ(r.status, 1) << "a changed run is a failure until updated on purpose";
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos);
}

TEST(Cli, RunErrorsAreOneLineWithFileAndLine) {
  const std::string s = tmp("bad.yaml");
  write(s, "topology: ring:3\nactions:\n  - {at: 0, node-down: Q7}\n");
  Result r = ibfab("run " + s);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + s + ":3: no node 'Q7' in the topology\n");
  r = ibfab("run /nonexistent.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: /nonexistent.yaml: cannot open: No such file or directory\n");
}

TEST(Cli, JsonReportParsesAsJson) {
  const std::string s = tmp("json.yaml");
  write(s, "name: \"quote\\\" me\"\ntopology: ring:3\nduration: 1ms\nactions:\n  - {at: 0, probe: H2}\n");
  const std::string out = tmp("report.json");
  const Result r = sh(std::string(IBFAB_BINARY) + " run --json " + s + " > " + out);
  ASSERT_EQ(r.status, 0);
  const Result check = sh("python3 -c 'import json,sys; d=json.load(open(\"" + out +
                          "\")); assert d[\"passed\"] and d[\"probes\"][0][\"nodes\"]==6 and d[\"scenario\"]==\"quote\\\" me\", d'");
  EXPECT_EQ(check.status, 0) << check.out;
}

// The capture of a run, decoded by tshark: LRH DLID, BTH opcode and the MAD
// attributes of the probe's SMPs are what the fabric sent.
TEST(Cli, CaptureDecodesInTshark) {
  const std::string s = tmp("cap.yaml");
  write(s, "topology: line:2\nduration: 1ms\nactions:\n  - {at: 0, probe: H1}\n");
  const std::string pcap = tmp("cap.pcap");
  ASSERT_EQ(ibfab("run --pcap " + pcap + " " + s).status, 0);
  const Result t = sh("HOME=" + ::testing::TempDir() + " tshark -r " + pcap +
                      " -T fields -E separator=, -e infiniband.lrh.dlid -e infiniband.bth.opcode"
                      " -e infiniband.bth.destqp -e infiniband.mad.attributeid -e infiniband.mad.method"
                      " 2>/dev/null | sort | uniq -c");
  ASSERT_EQ(t.status, 0) << t.out;
  // Directed-route SMPs: permissive DLID (65535), UD SEND_ONLY (100), QP0; NodeInfo
  // (0x0011), NodeDescription (0x0010) and PortInfo (0x0015) Gets (1) and
  // their GetResps (0x81).
  for (const char* row : {"65535,100,0x000000,0x0011,0x01", "65535,100,0x000000,0x0011,0x81",
                          "65535,100,0x000000,0x0010,0x01", "65535,100,0x000000,0x0015,0x81"})
    EXPECT_NE(t.out.find(row), std::string::npos) << row << " in\n" << t.out;
  const Result n = sh("HOME=" + ::testing::TempDir() + " tshark -r " + pcap + " 2>/dev/null | wc -l");
  const Result run = ibfab("run --json " + s);
  const auto at = run.out.find("\"delivered\": ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(std::stoul(n.out), std::stoul(run.out.substr(at + 13))) << "one record per delivered hop";
}

TEST(Cli, CaptureOfChosenLinksOnly) {
  const std::string s = tmp("cap2.yaml");
  write(s, "topology: line:3\nduration: 1ms\nactions:\n  - {at: 0, probe: H1}\n");
  const std::string all = tmp("all.pcap"), one = tmp("one.pcap");
  ASSERT_EQ(ibfab("run --pcap " + all + " " + s).status, 0);
  ASSERT_EQ(ibfab("run --pcap " + one + " --pcap-link H3[1] " + s).status, 0);
  auto count = [](const std::string& f) {
    return std::stoul(sh("HOME=" + ::testing::TempDir() + " tshark -r " + f + " 2>/dev/null | wc -l").out);
  };
  const unsigned long n_all = count(all), n_one = count(one);
  EXPECT_GT(n_one, 0u);
  EXPECT_LT(n_one * 4, n_all) << "H3's cable is one of five and sees the fewest SMPs";
  const Result bad = ibfab("run --pcap " + one + " --pcap-link H3[7] " + s);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--pcap-link H3[7]"), std::string::npos) << bad.out;
}

TEST(Cli, DotWritesOnePicturePerTreeFromTheRealMfts) {
  const std::string s = tmp("dot.yaml");
  write(s,
        "topology: fat-tree:2:4\nduration: 5ms\nsms:\n  - {node: H1}\nactions:\n"
        "  - {at: 1ms, join: {node: H2, mgid: \"ff12:4001::1\"}}\n"
        "  - {at: 1ms, join: {node: H7, mgid: \"ff12:4001::1\"}}\n");
  const std::string dir = tmp("dots");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(ibfab("run --dot " + dir + " " + s).status, 0);
  std::ifstream in(dir + "/mlid-c001.dot");
  ASSERT_TRUE(in) << "one file for the group's MLID";
  std::stringstream text;
  text << in.rdbuf();
  const std::string d = text.str();
  EXPECT_NE(d.find("\"H2\" [shape=ellipse, style=filled"), std::string::npos) << d;
  EXPECT_NE(d.find("\"H7\" [shape=ellipse, style=filled"), std::string::npos);
  EXPECT_EQ(d.find("\"H3\""), std::string::npos) << "non-members are left out";
  // H2 on L1 and H7 on L4 meet at one spine: 4 cables on the tree.
  std::size_t on_tree = 0;
  for (std::size_t at = d.find("penwidth"); at != std::string::npos; at = d.find("penwidth", at + 1)) ++on_tree;
  EXPECT_EQ(on_tree, 4u) << d;
  EXPECT_EQ(ibfab("run --dot /nonexistent/dir " + s).status, 2);
}

TEST(Cli, CompareNeedsTwoKnownPolicies) {
  const std::string s = tmp("cmp.yaml");
  write(s, "topology: ring:3\nduration: 1ms\nsms:\n  - {node: H1}\n");
  Result r = ibfab("run --compare minhop " + s);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--compare takes two policies"), std::string::npos) << r.out;
  r = ibfab("run --compare minhop,astrology " + s);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("'astrology' is no routing engine or multicast policy"), std::string::npos) << r.out;
  r = ibfab("run --compare minhop,updn " + s);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("minhop"), std::string::npos);
  EXPECT_NE(r.out.find("updn"), std::string::npos);
}

TEST(Cli, TopoShowListsTheAddresses) {
  const Result r = ibfab("topo show fat-tree:2:4 --addresses");
  EXPECT_EQ(r.status, 0) << r.out;
  // After the counts: a heading, then one line per HCA port.
  const std::size_t heading = r.out.find("addresses 8 ports (NODE PORT IPV4 IPV6); multicast route: port 1\n");
  ASSERT_NE(heading, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("diameter  "), heading);
  EXPECT_NE(r.out.find("\n          H1 1 10.1.0.1/16 fd00:0:0:1::1/64\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n          H8 1 10.1.0.8/16 fd00:0:0:1::8/64\n"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin() + static_cast<std::ptrdiff_t>(heading), r.out.end(), '\n'), 9) << r.out;
  EXPECT_EQ(ibfab("topo show fat-tree:2:4").out.find("addresses"), std::string::npos) << "only when asked";
}

TEST(Cli, TopoShowPreviewsIpAndMcastRoute) {
  const Result r = ibfab("topo show fat-tree:2:4 --addresses --ip H2=192.168.0.2/24 --ip H3:1=fd01::3 "
                         "--mcast-route none");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("multicast route: none\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("          H2 1 192.168.0.2/24 fd00:0:0:1::2/64\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("          H3 1 10.1.0.3/16 fd01::3/64\n"), std::string::npos) << r.out;
}

// --ip-file: the overrides of a file, with comments and blank lines, as
// --ip gives them; a line that is no override names the file and line.
TEST(Cli, IpFileGivesOverridesAsIpDoes) {
  const std::string file = tmp("addresses.txt");
  std::ofstream(file) << "# lab addresses\n\n  H2=192.168.0.2/24   # the head node\nH3:1=fd01::3\n";
  Result r = ibfab("topo show fat-tree:2:4 --addresses --ip-file " + file + " --ip H4=192.168.0.4/24");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("          H2 1 192.168.0.2/24 fd00:0:0:1::2/64\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("          H3 1 10.1.0.3/16 fd01::3/64\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("          H4 1 192.168.0.4/24 fd00:0:0:1::4/64\n"), std::string::npos) << r.out;
  r = ibfab("topo show fat-tree:2:4 --addresses --ip-file " + file + " --ip H5=192.168.0.2/24");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: address override 'H5=192.168.0.2/24': 192.168.0.2 is also the address of H2[1]\n");
  std::ofstream(file) << "H2=192.168.0.2\nH3 192.168.0.3\n";
  r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("bad-ip-file.sock") + " --ip-file " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + file + ":2: expected NODE[:PORT]=ADDRESS[/PREFIX], got 'H3 192.168.0.3'\n");
  EXPECT_FALSE(std::filesystem::exists(tmp("bad-ip-file.sock")));
  r = ibfab("topo show fat-tree:2:4 --addresses --ip-file " + tmp("no-such-file.txt"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: --ip-file: " + tmp("no-such-file.txt") + ": cannot open: No such file or directory\n");
}

TEST(Cli, BadIpIsOneLineAndExitTwo) {
  Result r = ibfab("topo show fat-tree:2:4 --addresses --ip H1:2=10.0.0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: address override 'H1:2=10.0.0.1': 'H1' has no port 2 (its ports: 1)\n");
  r = ibfab("topo show fat-tree:2:4 --addresses --ip H2=10.1.0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: address override 'H2=10.1.0.1': 10.1.0.1 is also the address of H1[1]\n");
  r = ibfab("topo show fat-tree:2:4 --ip H1=10.0.0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--ip requires --addresses"), std::string::npos) << r.out;
  r = ibfab("topo show fat-tree:2:4 --addresses --mcast-route 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--mcast-route"), std::string::npos) << r.out;
  // serve refuses it before it listens.
  r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("bad-ip.sock") + " --ip H9=10.0.0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: address override 'H9=10.0.0.1': no node named 'H9'\n");
  EXPECT_FALSE(std::filesystem::exists(tmp("bad-ip.sock")));
}

TEST(Cli, ServeSaNoSendOnlyNeedsTheBuiltinSm) {
  const Result r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("no-sofm.sock") + " --sm none --sa-no-send-only");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--sa-no-send-only"), std::string::npos) << r.out;
  EXPECT_NE(ibfab("serve --help").out.find("--sa-no-send-only"), std::string::npos);
}

// serve --routing names one of the built-in SM's engines, and only with it.
TEST(Cli, ServeRoutingIsAnEngineOfTheBuiltinSm) {
  Result r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("routing.sock") + " --routing lash");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--routing: lash not in {minhop,updn,ftree}"), std::string::npos) << r.out;
  r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("routing.sock") + " --sm none --routing updn");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("opensm -R"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(tmp("routing.sock")));
}

TEST(Cli, ServePartitionsAreCheckedBeforeServing) {
  const std::string conf = tmp("bad-partitions.conf");
  std::ofstream(conf) << "Default=0x7fff: ALL=full;\nTenant=0x8001, colour=red: ALL;\n";
  Result r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("bad-part.sock") + " --partitions " + conf);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + conf + ":2: unrecognized partition flag 'colour'\n");
  r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("fifo-part.sock") + " --partitions /dev/null");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("ibfab: /dev/null: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  r = ibfab("serve --topology fat-tree:2:4 --socket " + tmp("none-part.sock") + " --sm none --partitions " + conf);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("opensm -P"), std::string::npos) << r.out;
  EXPECT_NE(ibfab("serve --help").out.find("--partitions"), std::string::npos);
}

TEST(Cli, ServeWithPartitionsGetsReady) {
  const std::string conf = tmp("good-partitions.conf");
  std::ofstream(conf) << "TenantA=0x8001, ipoib: 0x0002c90200000004=full, 0x0002c90200000006=full;\n";
  const std::string out = serve_until_ready({"--topology", "fat-tree:2:4", "--partitions", conf});
  EXPECT_NE(out.find("\nready\n"), std::string::npos) << out;
}

TEST(Cli, ServeListsTheAddressesBeforeReady) {
  const std::string out = serve_until_ready({"--topology", "fat-tree:2:4", "--ip", "H2=fd00::2", "--sa-no-send-only"});
  const std::size_t first = out.find("address H1 1 10.1.0.1/16 fd00:0:0:1::1/64\n");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_NE(out.find("address H2 1 10.1.0.2/16 fd00::2/64\n"), std::string::npos) << out;
  EXPECT_NE(out.find("address H8 1 10.1.0.8/16 fd00:0:0:1::8/64\n"), std::string::npos) << out;
  const std::size_t ready = out.find("\nready\n");
  ASSERT_NE(ready, std::string::npos) << out;
  EXPECT_LT(first, ready);
  std::size_t lines = 0;
  for (std::size_t at = out.find("\naddress "); at != std::string::npos; at = out.find("\naddress ", at + 1)) ++lines;
  EXPECT_EQ(lines, 8u) << out;
}

TEST(Cli, ServeCountsTheAddressesOfMoreThan64Hosts) {
  const std::string out = serve_until_ready({"--topology", "fat-tree:2:12"});  // 72 hosts
  EXPECT_NE(out.find("\naddresses: 72 ports (ibfab topo show --addresses lists them)\nready\n"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("\naddress "), std::string::npos) << out;
}

// --- Inputs that cannot hang ibfab or fill its memory (every one exits 2
// with one line naming the file) ---

// A FIFO with no writer: `timeout` ends the command if it blocks on it.
std::string fifo(const std::string& name) {
  const std::string path = tmp(name);
  std::filesystem::remove(path);
  ::mkfifo(path.c_str(), 0600);
  return path;
}

TEST(Cli, ANetFileThatIsAFifoIsRefused) {
  const std::string net = fifo("fifo.net");
  const Result r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " topo show " + net);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + net + ": a FIFO, not a regular file\n");
}

TEST(Cli, AScenarioThatIsAFifoIsRefused) {
  const std::string yaml = fifo("fifo.yaml");
  const Result r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " run " + yaml);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + yaml + ": a FIFO, not a regular file\n");
}

TEST(Cli, AnIpFileThatIsAFifoIsRefusedBeforeServeListens) {
  const std::string file = fifo("fifo-ip.txt");
  const std::string sock = tmp("fifo-ip.sock");
  const Result r =
      sh("timeout 30 " + std::string(IBFAB_BINARY) + " serve --topology line:2 --socket " + sock + " --ip-file " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: --ip-file: " + file + ": a FIFO, not a regular file\n");
  EXPECT_FALSE(std::filesystem::exists(sock));
}

TEST(Cli, DevZeroIsRefusedWhereAFileIsExpected) {
  Result r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " run /dev/zero");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: /dev/zero: a character device, not a regular file\n");
  r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " topo show line:2 --addresses --ip-file /dev/zero");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "ibfab: --ip-file: /dev/zero: a character device, not a regular file\n");
  r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " topo show /dev/zero");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: /dev/zero: a character device, not a regular file\n");
}

TEST(Cli, AScenarioLargerThanTheLimitIsRefused) {
  const std::string yaml = tmp("huge.yaml");
  std::filesystem::resize_file((std::ofstream(yaml), yaml), (std::uintmax_t{16} << 20) + 1);  // sparse
  const Result r = ibfab("run " + yaml);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + yaml + ": larger than 16 MiB (the limit for scenario files)\n");
  std::filesystem::remove(yaml);
}

// `ibfab run` on a scenario file NAME (in TempDir) holding TEXT.
struct RunResult {
  std::string file;
  Result result;
};
RunResult run_text(const std::string& name, const std::string& text) {
  RunResult r{tmp(name), {}};
  write(r.file, text);
  r.result = ibfab("run " + r.file);
  return r;
}

TEST(Cli, AJoinStateThatIsNoNumberNamesFileAndLine) {
  const auto [s, r] = run_text("js.yaml", "topology: ring:3\nactions:\n  - {at: 0, join: {node: H1, mgid: \"ff12::1\", join-state: 0xzz}}\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + s +
                       ":3: 'join-state': full, non-member, send-only-non-member, send-only-full, or bits 0x1..0xf; "
                       "got '0xzz'\n");
}

TEST(Cli, AYamlMapUsedAsAKeyNamesFileAndLine) {
  const auto [s, r] = run_text("mapkey.yaml", "topology: ring:3\n{a: 1}: 2\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + s + ":2: a key must be a single word, not a list or a map\n");
}

TEST(Cli, ADuplicateKeyIsRefused) {
  const RunResult top = run_text("dup.yaml", "topology: ring:3\nduration: 1ms\nduration: 2ms\n");
  EXPECT_EQ(top.result.status, 2);
  EXPECT_EQ(top.result.out, "ibfab: " + top.file + ":3: duplicate key 'duration' (first at line 2)\n");
  const RunResult action = run_text("dup-at.yaml", "topology: ring:3\nactions:\n  - {at: 0, probe: H1, at: 1ms}\n");
  EXPECT_EQ(action.result.status, 2);
  EXPECT_EQ(action.result.out, "ibfab: " + action.file + ":3: duplicate key 'at' (first at line 3)\n");
}

TEST(Cli, ANegativeMaskIsRefused) {
  const auto [s, r] = run_text("mask.yaml", "topology: ring:3\nactions:\n  - {at: 0, join: {node: H1, mgid: \"ff12::1\", mask: -1}}\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + s + ":3: 'mask': expected a non-negative number, got '-1'\n");
}

TEST(Cli, ASeedIsADecimalNumberThatFitsIn64Bits) {
  const std::string s = tmp("seed.yaml");
  write(s, "topology: ring:3\nduration: 1ms\n");
  for (const char* bad : {"-1", "18446744073709551616", "1e3"}) {
    const Result r = ibfab("run --seed " + std::string(bad) + " " + s);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.out.find(std::string("'") + bad + "' is no seed"), std::string::npos) << r.out;
  }
  EXPECT_EQ(ibfab("run --seed 18446744073709551615 " + s).status, 0);
}

TEST(Cli, AnEmptyNetFileIsRefused) {
  const std::string net = tmp("empty.net");
  write(net, "");
  const Result r = ibfab("topo show " + net);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + net + ": no nodes (a net file declares at least one Switch or Ca)\n");
}

TEST(Cli, ALinkNamedWithTheWrongFarEndIsRefused) {
  // line:2: S1[1]-H1[1], S1[2]-S2[2] (generators cable hosts first).
  const auto [s, r] = run_text("farend.yaml",
                               "topology: line:2\nduration: 1ms\nactions:\n  - {at: 0, link-down: \"S1[1]-H1[1]\"}\n"
                               "  - {at: 0, link-down: \"S1[1]-S2[7]\"}\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + s + ":5: S1[1]-S2[7]: S1[1] is cabled to H1[1]\n");
  const Result pcap = ibfab("run --pcap " + tmp("farend.pcap") + " --pcap-link S1[1]-S2[2] " + s);
  EXPECT_EQ(pcap.status, 2);
  EXPECT_EQ(pcap.out, "ibfab: --pcap-link S1[1]-S2[2]: S1[1] is cabled to H1[1]\n");
}

TEST(Cli, AnEmptySocketPathIsRefused) {
  // `timeout`: were "" taken as the default, serve would start and stay.
  Result r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " serve --topology line:2 --socket ''");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--socket: an empty path"), std::string::npos) << r.out;
  r = ibfab("exec --socket '' --node H1 -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--socket: an empty path"), std::string::npos) << r.out;
}

TEST(Cli, ATraceThatCannotBeWrittenFailsTheRun) {
  const std::string s = tmp("full.yaml");
  write(s, "topology: ring:3\nduration: 1ms\nactions:\n  - {at: 0, probe: H1}\n");
  const Result r = ibfab("run --trace /dev/full " + s);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("ibfab: /dev/full: the trace could not be written: No space left on device\n"), std::string::npos)
      << r.out;
}

// --- The socket: this user's, in a private directory; a stranger on either
// end is refused ---

// A fresh directory under TempDir with `mode`, for one test.
std::string fresh_dir(const std::string& name, mode_t mode) {
  const std::string dir = tmp(name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), mode);
  return dir;
}

TEST(Cli, ServeLeavesAFileThatIsNoSocketAlone) {
  const std::string file = tmp("precious.txt");
  write(file, "data\n");
  const Result r = sh("timeout 30 " + std::string(IBFAB_BINARY) + " serve --topology line:2 --socket " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + file + " exists and is not a socket: refusing to replace it (choose another --socket)\n");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "data\n");
}

TEST(Cli, TheDefaultSocketIsInAPrivateDirectory) {
  const std::string tmpdir = fresh_dir("tmpdir", 0755);
  const std::string dir = tmpdir + "/ibfab-" + std::to_string(::geteuid());
  const std::vector<std::string> env = {"-XDG_RUNTIME_DIR", "-IBFAB_SOCKET", "TMPDIR=" + tmpdir};
  {
    Background serve({IBFAB_BINARY, "serve", "--topology", "line:2"}, env);
    const std::string out = serve.until_ready();
    ASSERT_NE(out.find("socket " + dir + "/ibfab.sock\n"), std::string::npos) << out;
    struct stat st;
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    // A client finds it there too.
    const Result r = sh("env -u XDG_RUNTIME_DIR -u IBFAB_SOCKET TMPDIR=" + tmpdir + " " + IBFAB_BINARY +
                        " exec --node H1 --no-device-view -- true");
    EXPECT_EQ(r.status, 0) << r.out;
  }
  // A directory that others may enter is not used.
  ::chmod(dir.c_str(), 0777);
  const Result r =
      sh("env -u XDG_RUNTIME_DIR TMPDIR=" + tmpdir + " timeout 30 " + IBFAB_BINARY + " serve --topology line:2");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: refusing the socket directory " + dir +
                       ": its mode is 0777, not 0700 (others could reach or replace the socket)\n");
}

// A copy of the binary that nobody may run (the build tree may be closed to
// other users).
std::string binary_for_nobody() {
  const std::string dir = fresh_dir("nobody-bin", 0755);
  const std::string copy = dir + "/ibfab";
  std::filesystem::copy_file(IBFAB_BINARY, copy);
  ::chmod(copy.c_str(), 0755);
  return copy;
}

// As root: `ibfab serve` run by nobody, in a directory nobody may write,
// stands where root's client looks.
TEST(Cli, ExecRefusesAnEngineOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to run a listener as nobody)";
  const std::string dir = fresh_dir("stranger", 0777);
  const std::string sock = dir + "/ibfab.sock";
  Background impostor({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary_for_nobody(), "serve",
                       "--topology", "line:2", "--socket", sock});
  ASSERT_NE(impostor.until_ready().find("ready\n"), std::string::npos) << impostor.until_ready();
  const Result r = ibfab("exec --socket " + sock + " --node H1 --no-device-view -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + sock + " is served by uid 65534 (nobody), not by you (uid 0 (root)) or root: "
                   "refusing to talk to it\n");
}

TEST(Cli, AnotherUserIsToldPermissionDenied) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to connect as nobody)";
  const std::string dir = fresh_dir("open", 0755);
  const std::string sock = dir + "/ibfab.sock";
  Background serve({IBFAB_BINARY, "serve", "--topology", "line:2", "--socket", sock});
  ASSERT_NE(serve.until_ready().find("ready\n"), std::string::npos) << serve.until_ready();
  const Result r = sh("setpriv --reuid=65534 --regid=65534 --clear-groups " + binary_for_nobody() + " exec --socket " +
                      sock + " --node H1 --no-device-view -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: " + sock + ": permission denied (the engine there belongs to uid 0 (root); an engine "
                   "serves only its own user)\n");
}

}  // namespace

#pragma once
// Checking MAD codecs against Wireshark's InfiniBand dissector: MADs go,
// packed by us, into UD packets on QP1 in a capture (pcap_writer.h's ERF
// records), and tshark prints the fields it decodes from each packet.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fabric/wire/packet_codec.h"
#include "fabric/wire/pcap_writer.h"
#include "tests/fabric/wire/sample_packets.h"

namespace ibfab::mad::testing {

inline constexpr const char* kTshark = "/usr/bin/tshark";

// A scratch folder for one capture, removed with it.
class Capture {
 public:
  Capture() {
    char tmpl[] = "/tmp/ibfab-tshark-XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) dir_ = tmpl;
  }
  ~Capture() {
    std::remove(path().c_str());
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  std::string path() const { return dir_ + "/mads.pcap"; }

  // Writes each 256-byte MAD as one packet on QP1, LID 1 to LID 2, one
  // microsecond apart; "" or what went wrong.
  std::string write(const std::vector<std::array<uint8_t, 256>>& mads) const {
    if (dir_.empty()) return "mkdtemp failed";
    wire::PcapWriter w;
    if (std::string e = w.open(path()); !e.empty()) return e;
    int64_t t = 1;
    for (const auto& m : mads) {
      std::vector<uint8_t> buf(512);
      const std::size_t n = wire::pack_packet(buf, wire::testing::mad_spec(m, 1, 0x0002, 0x0001));
      if (n == 0) return "pack_packet failed";
      buf.resize(n);
      if (!w.write(sim::Time::us(t++), buf)) return "write failed";
    }
    return w.close();
  }

 private:
  std::string dir_;
};

// What `tshark -n -r pcap args` prints on its standard output.
inline std::string run_tshark(const std::string& pcap, const std::string& args) {
  const std::string cmd = std::string("HOME=/tmp ") + kTshark + " -n -r '" + pcap + "' " + args + " 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  std::size_t n;
  while (p && (n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  if (p) ::pclose(p);
  return out;
}

// tshark's values of `fields` for each packet of `pcap`, one map per
// packet (repeated fields joined with commas, as tshark prints them).
inline std::vector<std::map<std::string, std::string>> decode(const std::string& pcap,
                                                              const std::vector<std::string>& fields) {
  std::string args = "-T fields -E separator=/t -E occurrence=a";
  for (const auto& f : fields) args += " -e " + f;
  const std::string out = run_tshark(pcap, args);
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::map<std::string, std::string> row;
    std::size_t start = 0;
    for (const auto& f : fields) {
      const std::size_t tab = line.find('\t', start);
      row[f] = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
      start = tab == std::string::npos ? line.size() : tab + 1;
    }
    rows.push_back(row);
  }
  return rows;
}

// Numbers compare by value (tshark prints some in hex, some in decimal);
// comma-separated lists element by element.
inline bool same(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string a, b;
  for (;;) {
    const bool ga = static_cast<bool>(std::getline(g, a, ',')), gb = static_cast<bool>(std::getline(w, b, ','));
    if (ga != gb) return false;
    if (!ga) return true;
    char* ea = nullptr;
    char* eb = nullptr;
    const unsigned long long va = std::strtoull(a.c_str(), &ea, 0), vb = std::strtoull(b.c_str(), &eb, 0);
    if (a.empty() || *ea != '\0' || *eb != '\0') {
      if (a != b) return false;
    } else if (va != vb) {
      return false;
    }
  }
}

// Expects each of `want`'s fields in `row` (packet `i`) to be `same`.
inline void expect_fields(const std::map<std::string, std::string>& row, std::size_t i,
                          const std::map<std::string, std::string>& want) {
  for (const auto& [f, v] : want) {
    const auto it = row.find(f);
    ASSERT_NE(it, row.end()) << f << " was not asked of tshark";
    EXPECT_TRUE(same(it->second, v)) << "packet " << i << " " << f << ": tshark '" << it->second
                                     << "', we packed '" << v << "'";
  }
}

}  // namespace ibfab::mad::testing

#pragma once
// Running tshark over a capture in the wire tests, and comparing what it
// prints with what we packed.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace ibfab::wire::testing {

inline constexpr const char* kTshark = "/usr/bin/tshark";

inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Runs tshark over `pcap` with `args` and returns what it prints (a failing
// run fails the test, with tshark's error output). `home` is a scratch
// directory for tshark's profile and error output.
inline std::string run_tshark(const std::string& pcap, const std::string& home,
                              const std::string& args) {
  const std::string err_path = home + "/tshark.err";
  const std::string cmd =
      "HOME='" + home + "' " + kTshark + " -n -r '" + pcap + "' " + args + " 2>'" + err_path + "'";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  std::ifstream err_in(err_path);
  const std::string err((std::istreambuf_iterator<char>(err_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << err;
  std::remove(err_path.c_str());
  return out;
}

// Runs tshark over `pcap` (with `extra` arguments) and returns one row of
// `fields` per packet.
template <class Fields>
std::vector<std::vector<std::string>> tshark_fields(const std::string& pcap, const std::string& home,
                                                    const Fields& fields,
                                                    const std::string& extra = "") {
  std::string args = "-T fields -E separator=/t" + extra;
  for (const auto& f : fields) args += std::string(" -e ") + f;
  const std::string out = run_tshark(pcap, home, args);
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> row;
    std::size_t start = 0;
    for (;;) {
      const std::size_t tab = line.find('\t', start);
      row.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    rows.push_back(row);
  }
  return rows;
}

// tshark prints some integer fields in decimal and others in hex: numbers
// compare by value, anything else as text.
inline bool same_value(const std::string& got, const std::string& want) {
  auto number = [](const std::string& s, unsigned long long& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    v = std::strtoull(s.c_str(), &end, 0);
    return *end == '\0';
  };
  unsigned long long a = 0;
  unsigned long long b = 0;
  if (number(got, a) && number(want, b)) return a == b;
  return got == want;
}

}  // namespace ibfab::wire::testing

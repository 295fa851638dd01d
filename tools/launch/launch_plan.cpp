#include "tools/launch/launch_plan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <optional>

namespace ibfab::launch {
namespace {

// A decimal number in [lo, hi], or nullopt.
std::optional<long> number(const std::string& s, long lo, long hi) {
  long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string who(const LaunchProgram& p, std::size_t index) {
  return p.host.empty() ? "program " + std::to_string(index + 1) : p.host;
}

// One program's words (between ':'s).
LaunchProgram parse_one(const std::vector<std::string>& words, std::size_t index) {
  LaunchProgram p;
  if (words.empty()) throw LaunchError("program " + std::to_string(index + 1) + ": nothing between ':'s");
  p.host = words[0];
  if (p.host.starts_with("-"))
    throw LaunchError("program " + std::to_string(index + 1) + ": '" + p.host +
                      "' where a host was expected (each program starts with its host: H1 PROGRAM ...)");
  std::size_t i = 1;
  const auto value = [&](const std::string& option) -> const std::string& {
    if (i + 1 >= words.size()) throw LaunchError(p.host + ": " + option + " needs a value");
    return words[++i];
  };
  for (; i < words.size() && words[i].starts_with("--"); ++i) {
    const std::string& option = words[i];
    if (option == "--ready-line") {
      p.ready_line = value(option);
      if (p.ready_line.empty()) throw LaunchError(p.host + ": --ready-line needs a non-empty text");
    } else if (option == "--ready-port") {
      const std::string& v = value(option);
      const auto port = number(v, 1, 65535);
      if (!port) throw LaunchError(p.host + ": --ready-port '" + v + "' is no TCP port (1 to 65535)");
      p.ready_port = static_cast<uint16_t>(*port);
    } else if (option == "--exit") {
      const std::string& v = value(option);
      const auto status = number(v, 0, 255);
      if (!status) throw LaunchError(p.host + ": --exit '" + v + "' is no exit status (0 to 255)");
      p.expect_exit = static_cast<int>(*status);
    } else if (option == "--background") {
      p.background = true;
    } else {
      throw LaunchError(p.host + ": unknown option '" + option +
                        "' (known: --ready-line, --ready-port, --exit, --background; the program comes after them)");
    }
  }
  if (!p.ready_line.empty() && p.ready_port != 0)
    throw LaunchError(p.host + ": --ready-line and --ready-port both given; a program has one readiness condition");
  if (i == words.size()) throw LaunchError(p.host + ": no program to run");
  p.argv.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  return p;
}

// `arg` with each "{NODE}" / "{NODE:PORT}" naming a host port replaced.
std::string substitute(const std::string& arg, const LaunchProgram& p, const topo::Topology& topology,
                       const topo::AddressPlan& plan) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t open = arg.find('{', at);
    const std::size_t close = open == std::string::npos ? open : arg.find('}', open);
    if (close == std::string::npos) break;
    const std::string inside = arg.substr(open + 1, close - open - 1);
    const std::size_t colon = inside.rfind(':');
    const std::string node = colon == std::string::npos ? inside : inside.substr(0, colon);
    const auto index = topology.find(node);
    if (!index || topology.nodes()[*index].kind != topo::NodeKind::Hca) {  // not a host: left as written
      out.append(arg, at, open + 1 - at);
      at = open + 1;
      continue;
    }
    long port = 1;
    if (colon != std::string::npos) {
      const auto n = number(inside.substr(colon + 1), 1, 254);
      if (!n) throw LaunchError(p.host + ": '{" + inside + "}': no such port number");
      port = *n;
    }
    const topo::PortAddress* a = plan.of(*index, static_cast<uint8_t>(port));
    if (!a) throw LaunchError(p.host + ": '{" + inside + "}': " + node + " has no port " + std::to_string(port));
    if (a->ipv4 == 0) throw LaunchError(p.host + ": '{" + inside + "}': that port has no IPv4 address");
    out.append(arg, at, open - at);
    out += topo::AddressPlan::ipv4_text(a->ipv4);
    at = close + 1;
  }
  out.append(arg, at);
  return out;
}

}  // namespace

std::vector<LaunchProgram> parse_programs(const std::vector<std::string>& words) {
  if (words.empty()) throw LaunchError("no programs to run (HOST PROGRAM [ARG...] [: HOST PROGRAM ...])");
  std::vector<LaunchProgram> programs;
  std::vector<std::string> one;
  for (std::size_t i = 0; i <= words.size(); ++i) {
    if (i == words.size() || words[i] == ":") {
      programs.push_back(parse_one(one, programs.size()));
      one.clear();
    } else {
      one.push_back(words[i]);
    }
  }
  return programs;
}

void resolve_hosts(std::vector<LaunchProgram>& programs, const topo::Topology& topology,
                   const topo::AddressPlan& plan) {
  for (std::size_t i = 0; i < programs.size(); ++i) {
    LaunchProgram& p = programs[i];
    const auto index = topology.find(p.host);
    if (!index) throw LaunchError(who(p, i) + ": no such host in the fabric");
    if (topology.nodes()[*index].kind != topo::NodeKind::Hca) throw LaunchError(who(p, i) + ": a switch, not a host");
    for (std::string& arg : p.argv) arg = substitute(arg, p, topology, plan);
  }
}

std::string find_program(const std::string& program, const std::string& path_env) {
  const auto runnable = [](const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) return runnable(program) ? program : "";
  std::size_t at = 0;
  while (at <= path_env.size()) {
    std::size_t end = path_env.find(':', at);
    if (end == std::string::npos) end = path_env.size();
    const std::string dir = end == at ? "." : path_env.substr(at, end - at);
    const std::string candidate = dir + "/" + program;
    if (runnable(candidate)) return candidate;
    at = end + 1;
  }
  return "";
}

}  // namespace ibfab::launch

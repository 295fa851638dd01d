#pragma once
// The programs of `ibfab launch`, as its command line gives them:
//
//   HOST [--ready-line TEXT] [--ready-port PORT] [--exit STATUS] [--background]
//        PROGRAM [ARG...] [: HOST ... PROGRAM [ARG...]]...
//
// A lone ":" separates programs (as mpirun's MPMD form does); the words
// after PROGRAM are its own, whatever they look like. In an argument,
// "{NODE}" and "{NODE:PORT}" stand for the IPv4 address of port 1 (PORT)
// of the fabric's host NODE; braces around anything that is not a host of
// the fabric are left as they are.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/topology/address_plan.h"
#include "fabric/topology/topology.h"

namespace ibfab::launch {

// Bad input: which program (its host, or its position) and what is wrong.
class LaunchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct LaunchProgram {
  std::string host;
  std::vector<std::string> argv;  // PROGRAM and its arguments
  std::string ready_line;         // the next program starts once a line of its output holds this
  uint16_t ready_port = 0;        // ... or once it listens on this TCP port (0: no such condition)
  int expect_exit = 0;            // the exit status that counts as passing
  bool background = false;        // stopped once the other programs have ended; passes if it ran until then
};

// Throws LaunchError for an empty list, an empty program between ':'s, an
// unknown or incomplete option, a port or status out of range, or both
// readiness conditions on one program.
std::vector<LaunchProgram> parse_programs(const std::vector<std::string>& words);

// Checks every host is a host (HCA) of `topology`, and replaces the
// "{NODE}" and "{NODE:PORT}" words inside every argument (addresses from
// `plan`). Throws LaunchError naming the program's host and the cause.
void resolve_hosts(std::vector<LaunchProgram>& programs, const topo::Topology& topology,
                   const topo::AddressPlan& plan);

// The path execv(2) would run for `program` as execvp(3) finds it on
// `path_env` (a name with a '/' is taken as it is); "" when there is no
// such executable file.
std::string find_program(const std::string& program, const std::string& path_env);

}  // namespace ibfab::launch

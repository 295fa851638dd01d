// libFuzzer target for the net-file reader. Any input either reads or
// throws TopologyError; anything else (another exception, a sanitizer
// report) is a bug. What reads must also survive the writer: writing it
// and reading that back gives the same nodes and the same text again, and
// DOT export and statistics run on it.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "fabric/topology/dot_writer.h"
#include "fabric/topology/netfile_reader.h"
#include "fabric/topology/netfile_writer.h"
#include "fabric/topology/topology_stats.h"

using ibfab::topo::Topology;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  Topology t;
  try {
    t = ibfab::topo::read_netfile(in, "fuzz.net");
  } catch (const ibfab::topo::TopologyError&) {
    return 0;
  }
  std::ostringstream written;
  ibfab::topo::write_netfile(written, t);
  std::istringstream again(written.str());
  const Topology back = ibfab::topo::read_netfile(again, "rewritten.net");  // must not throw
  if (back.nodes() != t.nodes() || back.links().size() != t.links().size()) std::abort();
  std::ostringstream rewritten;
  ibfab::topo::write_netfile(rewritten, back);
  if (rewritten.str() != written.str()) std::abort();

  std::ostringstream dot;
  ibfab::topo::write_dot(dot, t);
  const auto stats = ibfab::topo::compute_stats(t);
  if (stats.links != t.links().size() || stats.switch_links + stats.host_links != stats.links) std::abort();
  return 0;
}

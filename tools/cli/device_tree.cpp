#include "tools/cli/device_tree.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "api/verbs/verbs_internal.h"

namespace ibfab::cli {
namespace {

inline constexpr const char* kDevice = "ibfab0";
inline constexpr unsigned kIbMajor = 231;      // IB_UVERBS_MAJOR / IB_UMAD_MAJOR
inline constexpr unsigned kUverbsBase = 192;   // IB_UVERBS_BASE_MINOR
inline constexpr unsigned kIssmBase = 64;      // IB_UMAD_MINOR_BASE + IB_UMAD_MAX_PORTS / 2
inline constexpr unsigned kMiscMajor = 10;
inline constexpr unsigned kRdmaCmMinor = 254;  // rdma_cm's misc minor is dynamic; any one free will do

[[noreturn]] void fail(const std::string& path) {
  throw std::runtime_error("cannot make " + path + ": " + std::strerror(errno));
}

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) fail(path);
}

void write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
  if (fd < 0) fail(path);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) fail(path);
}

void make_link(const std::string& path, const std::string& target) {
  if (::symlink(target.c_str(), path.c_str()) != 0) fail(path);
}

// `mode` as rdma-core's udev rules set it (0666 for uverbs and rdma_cm,
// 0600 for umad and issm).
void make_char_device(const std::string& path, unsigned major, unsigned minor, mode_t mode, bool real) {
  if (!real) return write_file(path, "");
  if (::mknod(path.c_str(), S_IFCHR | mode, makedev(major, minor)) != 0 || ::chmod(path.c_str(), mode) != 0)
    fail(path);
}

std::string format(const char* fmt, auto... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// "%04x:%04x:%04x:%04x", as ib_core prints a node GUID.
std::string guid_text(uint64_t g) {
  return format("%04x:%04x:%04x:%04x\n", static_cast<unsigned>(g >> 48), static_cast<unsigned>(g >> 32) & 0xFFFF,
                static_cast<unsigned>(g >> 16) & 0xFFFF, static_cast<unsigned>(g) & 0xFFFF);
}

// "%pI6": eight groups of four hex digits, nothing left out.
std::string gid_text(uint64_t prefix, uint64_t guid) {
  std::string out;
  for (int i = 0; i < 8; ++i) {
    const uint64_t half = i < 4 ? prefix : guid;
    out += format(i ? ":%04x" : "%04x", static_cast<unsigned>(half >> (48 - 16 * (i % 4))) & 0xFFFF);
  }
  return out + "\n";
}

const char* port_state_name(unsigned s) {
  static constexpr const char* kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return s < std::size(kNames) ? kNames[s] : "UNKNOWN";
}

const char* phys_state_name(unsigned s) {
  static constexpr const char* kNames[] = {"<unknown>", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
                                           "LinkUp", "LinkErrorRecovery", "Phy Test"};
  return s < std::size(kNames) ? kNames[s] : "<unknown>";
}

// The kernel's rate file: width x lane speed, "%d%s Gb/sec (%dX%s)".
std::string rate_text(uint8_t width, uint8_t speed) {
  int lanes = 1;
  switch (width) {
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: break;
  }
  const char* name = " SDR";
  int tenths = 25;  // Gb/s per lane, in tenths
  switch (speed) {
    case 2: name = " DDR"; tenths = 50; break;
    case 4: name = " QDR"; tenths = 100; break;
    case 8: name = " FDR10"; tenths = 100; break;
    case 16: name = " FDR"; tenths = 140; break;
    case 32: name = " EDR"; tenths = 250; break;
    case 64: name = " HDR"; tenths = 500; break;
    case 128: name = " NDR"; tenths = 1000; break;
    default: break;
  }
  const int rate = tenths * lanes;
  return format("%d%s Gb/sec (%dX%s)\n", rate / 10, rate % 10 ? ".5" : "", lanes, name);
}

void write_port(const std::string& dir, const api::PortRecord& p) {
  make_dir(dir);
  write_file(dir + "/state", format("%u: %s\n", p.state, port_state_name(p.state)));
  write_file(dir + "/phys_state", format("%u: %s\n", p.phys_state, phys_state_name(p.phys_state)));
  write_file(dir + "/lid", format("0x%x\n", p.lid));
  write_file(dir + "/lid_mask_count", format("%u\n", p.lmc));
  write_file(dir + "/sm_lid", format("0x%x\n", p.sm_lid));
  write_file(dir + "/sm_sl", format("%u\n", p.sm_sl));
  write_file(dir + "/rate", rate_text(p.active_width, p.active_speed));
  write_file(dir + "/link_layer", "InfiniBand\n");
  write_file(dir + "/cap_mask", format("0x%08x\n", p.capability_mask));
  make_dir(dir + "/gids");
  write_file(dir + "/gids/0", gid_text(p.gid_prefix, p.port_guid));  // the port's one GID (gid_tbl_len 1)
  make_dir(dir + "/gid_attrs");
  make_dir(dir + "/gid_attrs/types");
  write_file(dir + "/gid_attrs/types/0", "IB/RoCE v1\n");
  make_dir(dir + "/pkeys");
  for (std::size_t i = 0; i < api::kMaxPkeys; ++i)
    write_file(dir + "/pkeys/" + std::to_string(i), format("0x%04x\n", i < p.pkey_count ? p.pkeys[i] : 0u));
}

}  // namespace

std::string ipoib_interface(unsigned port) { return "ib" + std::to_string(port - 1); }

void write_device_tree(const std::string& root, const HostSnapshot& host, bool device_nodes) {
  const api::NodeReply& n = host.node;
  const unsigned ports = std::min<unsigned>(n.num_ports, api::kMaxPorts);
  const std::string cls = root + "/class";
  make_dir(cls);

  const std::string ib = cls + "/infiniband";
  const std::string dev = ib + "/" + kDevice;
  make_dir(ib);
  make_dir(dev);
  write_file(dev + "/node_guid", guid_text(n.node_guid));
  write_file(dev + "/sys_image_guid", guid_text(n.system_image_guid));
  write_file(dev + "/node_type", "1: CA\n");
  write_file(dev + "/node_desc", std::string(n.name, strnlen(n.name, sizeof n.name)) + "\n");
  write_file(dev + "/fw_ver", std::string(verbs::kFwVer) + "\n");
  write_file(dev + "/hw_rev", format("%x\n", verbs::kHwVer));
  write_file(dev + "/hca_type", "ibfab\n");
  write_file(dev + "/board_id", std::string(verbs::kBoardId) + "\n");
  make_dir(dev + "/device");
  make_dir(dev + "/device/net");
  make_dir(dev + "/ports");
  for (unsigned p = 1; p <= ports; ++p) {
    make_link(dev + "/device/net/" + ipoib_interface(p), "/sys/class/net/" + ipoib_interface(p));
    write_port(dev + "/ports/" + std::to_string(p), n.ports[p - 1]);
  }

  const std::string verbs = cls + "/infiniband_verbs";
  make_dir(verbs);
  write_file(verbs + "/abi_version", "6\n");
  make_dir(verbs + "/uverbs0");
  write_file(verbs + "/uverbs0/ibdev", std::string(kDevice) + "\n");
  write_file(verbs + "/uverbs0/abi_version", "1\n");
  write_file(verbs + "/uverbs0/dev", format("%u:%u\n", kIbMajor, kUverbsBase));

  const std::string mad = cls + "/infiniband_mad";
  make_dir(mad);
  write_file(mad + "/abi_version", "5\n");
  for (unsigned p = 1; p <= ports; ++p) {
    for (const auto& [kind, base] : {std::pair{"umad", 0u}, std::pair{"issm", kIssmBase}}) {
      const std::string d = mad + "/" + kind + std::to_string(p - 1);
      make_dir(d);
      write_file(d + "/ibdev", std::string(kDevice) + "\n");
      write_file(d + "/port", format("%u\n", p));
      write_file(d + "/dev", format("%u:%u\n", kIbMajor, base + p - 1));
    }
  }

  make_dir(root + "/dev");
  const std::string devs = root + "/dev/infiniband";
  make_dir(devs);
  make_char_device(devs + "/uverbs0", kIbMajor, kUverbsBase, 0666, device_nodes);
  make_char_device(devs + "/rdma_cm", kMiscMajor, kRdmaCmMinor, 0666, device_nodes);
  for (unsigned p = 1; p <= ports; ++p) {
    make_char_device(devs + "/umad" + std::to_string(p - 1), kIbMajor, p - 1, 0600, device_nodes);
    make_char_device(devs + "/issm" + std::to_string(p - 1), kIbMajor, kIssmBase + p - 1, 0600, device_nodes);
  }
}

}  // namespace ibfab::cli

#pragma once
// The files a Linux kernel shows for one host's HCA, made from a
// HostSnapshot, for `ibfab exec` to lay over /sys/class and /dev
// (host_view.h). Under `root`:
//   class/infiniband/ibfab0/   node_guid, sys_image_guid, node_type,
//       node_desc, fw_ver, hw_rev, hca_type, board_id, device/net/ibN
//       (links to /sys/class/net/ibN), ports/P/{state, phys_state, lid,
//       lid_mask_count, sm_lid, sm_sl, rate, link_layer, cap_mask,
//       gids/I, gid_attrs/types/I, pkeys/I}
//   class/infiniband_verbs/    abi_version, uverbs0/{ibdev, abi_version, dev}
//   class/infiniband_mad/      abi_version, umadN/{ibdev, port, dev},
//       issmN/{ibdev, port, dev} (N = P - 1)
//   dev/infiniband/            uverbs0, umadN, issmN, rdma_cm
// Each file holds what the kernel's ib_core, ib_uverbs and ib_umad print
// (the same formats: "0x%x" LIDs, "%d: %s" states, "100 Gb/sec (4X EDR)"
// rates, eight groups of four hex digits for GIDs, "0x%04x" P_Keys).
// The character devices have the kernel's numbers (231:192 uverbs, 231:N
// umad, 231:64+N issm; rdma_cm on the misc major 10), so that opening one
// fails as on a host whose driver is not loaded; with `device_nodes`
// false (no CAP_MKNOD) they are empty regular files instead.
#include <string>

#include "tools/cli/host_snapshot.h"

namespace ibfab::cli {

// The name the kernel gives the IPoIB interface of HCA port `port` (1-based).
std::string ipoib_interface(unsigned port);

// Writes the tree under `root` (an existing, empty directory). Throws
// std::runtime_error naming the file it could not make.
void write_device_tree(const std::string& root, const HostSnapshot& host, bool device_nodes);

}  // namespace ibfab::cli

#pragma once
// Reads the topology text that ibnetdiscover prints and ibsim loads.
//
// Grammar (one item per line; leading/trailing blanks and a trailing '\r'
// are ignored; '#' starts a comment line):
//   assignment   vendid=N | devid=N | sysimgguid=G | switchguid=G[(G)]
//                | caguid=G | hcaguids=G | rtguid=G      [# comment]
//                N: decimal or 0x-hex; G: 0x-hex or decimal 64-bit.
//   node header  (Switch | Ca | Hca) PORTS "NAME" [# comment]
//                comment: "DESC" ... or an unquoted DESC ending at
//                " enhanced port " / " base port " / " lid " / " lmc ".
//   port line    [P][ext E][(G)] "PEER"[[Q]][ext E][(G)] [# comment]
//                Q defaults to 1 (ibsim). An HCA's own (G) is its port
//                GUID. In the comment, the last token outside quotes that
//                looks like NxSPEED ("4xEDR") is the link rate.
//   also skipped: blank lines (they end a node's block), ibnetdiscover -g
//                 "Chassis ..." and "Hostname: ..." lines.
// Port lines belong to the node header above them, up to the next blank or
// non-port line.
//
// Semantics:
//   - GUID lines follow ibsim: switchguid= / caguid= set the next GUID of
//     that kind; each node then takes the next one (a switch 1, an HCA
//     ports + 1), so nodes without GUID lines get deterministic GUIDs
//     (GuidAllocator). sysimgguid= applies to the next node only;
//     vendid= / devid= stay in force until changed (defaults: Mellanox
//     0x02c9, device 0xcf08 for switches, 0x1017 for HCAs).
//   - HCA port GUIDs come from "[P](G)", else node GUID + P.
//   - A link may be declared from one end (ibsim) or both (ibnetdiscover);
//     both become one link. Its rate is the first declaration's rate
//     (default 4xEDR; "FDR10" reads as QDR), propagation 10 ns.
//
// Throws TopologyError "FILE:LINE: problem" for: an unknown node type,
// routers (Rt), unsupported ibsim directives (include, do, aliases, ...),
// ports out of range, a port declared twice, a link to an undeclared node
// (at the link's line), links whose two declarations disagree (at the later
// one), a port taken by two links, garbled numbers/quotes/GUIDs, duplicate
// names or GUIDs, and nodes with 0 or too many ports; "FILE: no nodes" for
// text that declares no node (an empty file).
// Cost: O(size of input) time and memory.
#include <istream>
#include <string>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

Topology read_netfile(std::istream& in, const std::string& filename);

}  // namespace ibfab::topo

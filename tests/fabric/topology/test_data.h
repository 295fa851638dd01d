#pragma once
// Shared inputs for the topology tests.
#include <string>

namespace ibfab::topo::testdata {

// A hand-written snapshot in the layout ibnetdiscover prints: two 36-port
// switches cabled twice (ports 35, 36), three 1-port CAs on the first, one
// 2-port CA on ports 1 and 2 of the second. One CA's port GUID equals its
// node GUID (as ConnectX-4 and later report). Line 10 is the first switch
// header.
inline const std::string kSnapshot = R"(#
# Topology file: generated on Tue Mar  5 10:12:01 2024
#
# Initiated from node 0002c90300a1b2c0 port 0002c90300a1b2c1

vendid=0x2c9
devid=0xcf08
sysimgguid=0x248a070300f8e1a0
switchguid=0x248a070300f8e1a0(248a070300f8e1a0)
Switch	36 "S-248a070300f8e1a0"		# "MF0;leaf1:MSB7700/U1" enhanced port 0 lid 3 lmc 0
[1]	"H-0002c90300a1b2c0"[1](2c90300a1b2c1) 		# "node01 mlx5_0" lid 5 4xEDR
[2]	"H-0002c90300a1b2d0"[1](2c90300a1b2d1) 		# "node02 mlx5_0" lid 6 4xEDR
[3]	"H-98039b0300867bba"[1](98039b0300867bba) 		# "node03 mlx5_0" lid 7 4xHDR
[35]	"S-248a070300f8e1c0"[35]		# "MF0;leaf2:MSB7700/U1" lid 4 4xEDR
[36]	"S-248a070300f8e1c0"[36]		# "MF0;leaf2:MSB7700/U1" lid 4 4xEDR

vendid=0x2c9
devid=0xcf08
sysimgguid=0x248a070300f8e1c0
switchguid=0x248a070300f8e1c0(248a070300f8e1c0)
Switch	36 "S-248a070300f8e1c0"		# "MF0;leaf2:MSB7700/U1" enhanced port 0 lid 4 lmc 0
[1]	"H-0002c90300a1b2f0"[1](2c90300a1b2f1) 		# "node04 mlx4_0" lid 8 4xQDR
[2]	"H-0002c90300a1b2f0"[2](2c90300a1b2f2) 		# "node04 mlx4_0" lid 9 4xQDR
[35]	"S-248a070300f8e1a0"[35]		# "MF0;leaf1:MSB7700/U1" lid 3 4xEDR
[36]	"S-248a070300f8e1a0"[36]		# "MF0;leaf1:MSB7700/U1" lid 3 4xEDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300a1b2c3
caguid=0x2c90300a1b2c0
Ca	1 "H-0002c90300a1b2c0"		# "node01 mlx5_0"
[1](2c90300a1b2c1) 	"S-248a070300f8e1a0"[1]		# lid 5 lmc 0 "MF0;leaf1:MSB7700/U1" lid 3 4xEDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300a1b2d3
caguid=0x2c90300a1b2d0
Ca	1 "H-0002c90300a1b2d0"		# "node02 mlx5_0"
[1](2c90300a1b2d1) 	"S-248a070300f8e1a0"[2]		# lid 6 lmc 0 "MF0;leaf1:MSB7700/U1" lid 3 4xEDR

vendid=0x15b3
devid=0x101b
sysimgguid=0x98039b0300867bba
caguid=0x98039b0300867bba
Ca	1 "H-98039b0300867bba"		# "node03 mlx5_0"
[1](98039b0300867bba) 	"S-248a070300f8e1a0"[3]		# lid 7 lmc 0 "MF0;leaf1:MSB7700/U1" lid 3 4xHDR

vendid=0x2c9
devid=0x1003
sysimgguid=0x2c90300a1b2f3
caguid=0x2c90300a1b2f0
Ca	2 "H-0002c90300a1b2f0"		# "node04 mlx4_0"
[1](2c90300a1b2f1) 	"S-248a070300f8e1c0"[1]		# lid 8 lmc 0 "MF0;leaf2:MSB7700/U1" lid 4 4xQDR
[2](2c90300a1b2f2) 	"S-248a070300f8e1c0"[2]		# lid 9 lmc 0 "MF0;leaf2:MSB7700/U1" lid 4 4xQDR
)";

// ibsim's short form: no GUID lines, links from one side only or both,
// a default peer port, comments inside blocks.
inline const std::string kShortForm = R"(# two switches, two hosts
Switch 8 "S1"
[1] "H1"[1]
# a comment inside the block
[3] "S2"[3]
[4] "S2"[4]

Switch 8 "S2"
[1] "H2"
[3] "S1"[3]

Hca 2 "H1"
[1] "S1"[1]
[2] "S2"[2]

Hca 1 "H2"
)";

}  // namespace ibfab::topo::testdata

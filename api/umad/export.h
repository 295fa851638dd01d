#pragma once
// IBFAB_UMAD_EXPORT marks a definition as part of libibumad.so.3's ABI: C
// linkage and default visibility. Everything else in the library is hidden
// (-fvisibility=hidden), and libibumad.map assigns each exported name the
// version node rdma-core 44 gives it; a name missing from the map stays local.
#define IBFAB_UMAD_EXPORT extern "C" [[gnu::visibility("default")]]

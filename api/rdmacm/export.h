#pragma once
// IBFAB_RDMACM_EXPORT marks a definition as part of librdmacm.so.1's ABI: C
// linkage and default visibility. Everything else in the library is hidden
// (-fvisibility=hidden), and librdmacm.map assigns each exported name the
// version node rdma-core 44 gives it; a name missing from the map stays local.
#define IBFAB_RDMACM_EXPORT extern "C" [[gnu::visibility("default")]]

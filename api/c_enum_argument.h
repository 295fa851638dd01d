#pragma once
// IBFAB_C_ENUM_ARGUMENT marks an exported function whose enum parameter a C
// caller may give any int (rdma-core's libraries answer "unknown" or -1 for
// values outside the enum; so do ours, and tests/api compares them). C++
// reads such a parameter as a value outside the enum's range, which UBSan's
// enum check reports: the check is off in these functions only
// (docs/ARCHITECTURE.md, "Sanitizers"); they read the value as an int at once.
#if defined(__clang__)
#define IBFAB_C_ENUM_ARGUMENT [[clang::no_sanitize("enum")]]
#else
#define IBFAB_C_ENUM_ARGUMENT
#endif

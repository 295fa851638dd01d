#pragma once
// RC/UC/XRC extension headers for the wire tests: every field a distinct
// value, and each header's bytes laid out by hand from the IBTA layouts (not
// produced by the code under test).
#include <array>
#include <cstdint>

#include "fabric/wire/aeth.h"
#include "fabric/wire/atomic_ack_eth.h"
#include "fabric/wire/atomic_eth.h"
#include "fabric/wire/reth.h"

namespace ibfab::wire::testing {

inline constexpr uint32_t kXrcSrqn = 0xa1b2c3;
inline constexpr std::array<uint8_t, 4> kXrcethBytes = {0x00, 0xa1, 0xb2, 0xc3};

inline constexpr Reth kReth{0x0102030405060708, 0x11121314, 0x21222324};
inline constexpr std::array<uint8_t, 16> kRethBytes = {
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // VA
    0x11, 0x12, 0x13, 0x14,                          // R_Key
    0x21, 0x22, 0x23, 0x24};                         // DMA Length

inline constexpr AtomicEth kAtomicEth{0x3132333435363738, 0x41424344, 0x5152535455565758,
                                      0x6162636465666768};
inline constexpr std::array<uint8_t, 28> kAtomicEthBytes = {
    0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,  // VA
    0x41, 0x42, 0x43, 0x44,                          // R_Key
    0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,  // Swap (Add) Data
    0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68}; // Compare Data

// NAK, Remote Access Error (syndrome 0 11 00010), MSN 0x717273.
inline constexpr Aeth kAeth{0x62, 0x717273};
inline constexpr std::array<uint8_t, 4> kAethBytes = {0x62, 0x71, 0x72, 0x73};

inline constexpr AtomicAckEth kAtomicAckEth{0x8182838485868788};
inline constexpr std::array<uint8_t, 8> kAtomicAckEthBytes = {0x81, 0x82, 0x83, 0x84,
                                                              0x85, 0x86, 0x87, 0x88};

inline constexpr uint32_t kImmediate = 0x91929394;
inline constexpr std::array<uint8_t, 4> kImmediateBytes = {0x91, 0x92, 0x93, 0x94};

inline constexpr uint32_t kInvalidateRkey = 0xa1a2a3a4;
inline constexpr std::array<uint8_t, 4> kIethBytes = {0xa1, 0xa2, 0xa3, 0xa4};

}  // namespace ibfab::wire::testing

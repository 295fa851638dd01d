#pragma once
// Cross-checks an attribute codec against libibmad's field table: every
// field packed by us reads back through mad_get_field, every field written
// through mad_set_field unpacks to the same value, and the two agree on
// every byte (so reserved bits match too).
#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace ibfab::mad::testing {

template <class T>
struct Field {
  MAD_FIELDS id;
  unsigned width;          // bits, as the IBTA defines the field
  const char* name;
  uint64_t (*get)(const T&);
  void (*set)(T&, uint64_t);
  unsigned ibmad_width = 0;  // libibmad's width when it differs (0 = same)
};

#define IBFAB_FIELD(T, id, width, member)                                              \
  ::ibfab::mad::testing::Field<T> {                                                    \
    id, width, #member, [](const T& t) { return static_cast<uint64_t>(t.member); },    \
        [](T& t, uint64_t v) {                                                         \
          t.member = static_cast<std::remove_cvref_t<decltype(t.member)>>(v);          \
        }                                                                              \
  }

constexpr uint64_t mask_of(unsigned width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// A value that uses the field's top and bottom bits and differs per field.
constexpr uint64_t distinctive(std::size_t k, unsigned width) {
  uint64_t v = 0x9E3779B97F4A7C15ull * (k + 3) ^ 0x5DEECE66Dull * (k + 11);
  v |= uint64_t{1} << (width - 1);
  v |= 1;
  return v & mask_of(width);
}

inline uint64_t ibmad_get(uint8_t* buf, MAD_FIELDS f, unsigned width) {
  return width > 32 ? mad_get_field64(buf, 0, f) : mad_get_field(buf, 0, f);
}

inline void ibmad_set(uint8_t* buf, MAD_FIELDS f, unsigned width, uint64_t v) {
  if (width > 32) mad_set_field64(buf, 0, f, v);
  else mad_set_field(buf, 0, f, static_cast<uint32_t>(v));
}

// The number of bits libibmad writes for a field set to all ones.
inline unsigned ibmad_width(MAD_FIELDS f, unsigned hint) {
  std::array<uint8_t, 256> buf{};
  ibmad_set(buf.data(), f, hint, ~uint64_t{0});
  unsigned bits = 0;
  for (uint8_t b : buf) bits += static_cast<unsigned>(__builtin_popcount(b));
  return bits;
}

// Fields libibmad has no entry for are pinned by hand elsewhere; for the
// all-ones comparison, ours_extra sets them to all ones in the struct and
// theirs_extra sets the same bits in libibmad's buffer.
template <class T>
void cross_check(const std::vector<Field<T>>& fields, void (*ours_extra)(T&) = nullptr,
                 void (*theirs_extra)(uint8_t*) = nullptr) {
  for (const auto& f : fields) {
    const unsigned theirs = f.ibmad_width ? f.ibmad_width : f.width;
    EXPECT_EQ(ibmad_width(f.id, theirs), theirs) << f.name << ": libibmad field width";
  }

  // Ours -> libibmad.
  T ours{};
  for (std::size_t k = 0; k < fields.size(); ++k) fields[k].set(ours, distinctive(k, fields[k].width));
  std::array<uint8_t, 256> packed{};
  ours.pack(std::span<uint8_t>(packed).first(T::kSize));
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const auto& f = fields[k];
    const uint64_t got = ibmad_get(packed.data(), f.id, f.ibmad_width ? f.ibmad_width : f.width);
    EXPECT_EQ(got & mask_of(f.width), distinctive(k, f.width)) << f.name << " (pack, read by libibmad)";
  }

  // libibmad -> ours, and byte-exact repack.
  std::array<uint8_t, 256> theirs{};
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const auto& f = fields[k];
    ibmad_set(theirs.data(), f.id, f.ibmad_width ? f.ibmad_width : f.width,
              distinctive(k + 7, f.width));
  }
  const T back = T::unpack(std::span<const uint8_t>(theirs).first(T::kSize));
  for (std::size_t k = 0; k < fields.size(); ++k) {
    EXPECT_EQ(fields[k].get(back), distinctive(k + 7, fields[k].width))
        << fields[k].name << " (written by libibmad, unpacked)";
  }
  std::array<uint8_t, 256> repacked{};
  back.pack(std::span<uint8_t>(repacked).first(T::kSize));
  EXPECT_EQ(repacked, theirs) << "repack differs from libibmad's bytes";

  // All ones: our pack covers exactly the bits libibmad's fields cover.
  T ones{};
  for (const auto& f : fields) f.set(ones, mask_of(f.width));
  if (ours_extra) ours_extra(ones);
  std::array<uint8_t, 256> ours_ones{};
  ones.pack(std::span<uint8_t>(ours_ones).first(T::kSize));
  std::array<uint8_t, 256> ibmad_ones{};
  for (const auto& f : fields) {
    ibmad_set(ibmad_ones.data(), f.id, f.ibmad_width ? f.ibmad_width : f.width,
              mask_of(f.ibmad_width ? f.ibmad_width : f.width));
  }
  if (theirs_extra) theirs_extra(ibmad_ones.data());
  EXPECT_EQ(ours_ones, ibmad_ones) << "all-ones layouts differ";
}

}  // namespace ibfab::mad::testing

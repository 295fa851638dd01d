#pragma once
// Explicit big-endian (network order) packing over a byte span.
//
// Writer and Reader never touch memory outside their span. A Reader that
// runs past its end stops reading, returns zeros, and reports !ok(); callers
// check ok() once after unpacking a whole header instead of after each field.
// Bit fields inside a byte or word are composed by the caller with shifts, so
// every field's position is visible where it is packed.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace ibfab::wire {

class Writer {
 public:
  explicit Writer(std::span<uint8_t> out) : p_(out.data()), n_(out.size()) {}

  void u8(uint8_t v) { if (room(1)) p_[pos_++] = v; }
  void u16(uint16_t v) { if (room(2)) { put(v, 2); } }
  void u24(uint32_t v) { if (room(3)) { put(v, 3); } }
  void u32(uint32_t v) { if (room(4)) { put(v, 4); } }
  void u64(uint64_t v) { if (room(8)) { put(v, 8); } }
  void bytes(const void* src, std::size_t len) {
    if (room(len)) { std::memcpy(p_ + pos_, src, len); pos_ += len; }
  }
  void zeros(std::size_t len) {
    if (room(len)) { std::memset(p_ + pos_, 0, len); pos_ += len; }
  }
  void seek(std::size_t pos) { if (pos <= n_) pos_ = pos; else ok_ = false; }

  std::size_t pos() const { return pos_; }
  bool ok() const { return ok_; }

 private:
  bool room(std::size_t len) {
    if (ok_ && n_ - pos_ >= len) return true;
    ok_ = false;
    return false;
  }
  void put(uint64_t v, int len) {
    for (int i = len - 1; i >= 0; --i) p_[pos_++] = static_cast<uint8_t>(v >> (8 * i));
  }
  uint8_t* p_;
  std::size_t n_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : p_(in.data()), n_(in.size()) {}

  uint8_t u8() { return room(1) ? p_[pos_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(room(2) ? get(2) : 0); }
  uint32_t u24() { return static_cast<uint32_t>(room(3) ? get(3) : 0); }
  uint32_t u32() { return static_cast<uint32_t>(room(4) ? get(4) : 0); }
  uint64_t u64() { return room(8) ? get(8) : 0; }
  void bytes(void* dst, std::size_t len) {
    if (room(len)) { std::memcpy(dst, p_ + pos_, len); pos_ += len; }
    else std::memset(dst, 0, len);
  }
  void skip(std::size_t len) { if (room(len)) pos_ += len; }
  void seek(std::size_t pos) { if (pos <= n_) pos_ = pos; else ok_ = false; }

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return n_ - pos_; }
  bool ok() const { return ok_; }

 private:
  bool room(std::size_t len) {
    if (ok_ && n_ - pos_ >= len) return true;
    ok_ = false;
    return false;
  }
  uint64_t get(int len) {
    uint64_t v = 0;
    for (int i = 0; i < len; ++i) v = (v << 8) | p_[pos_++];
    return v;
  }
  const uint8_t* p_;
  std::size_t n_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Single-field access at a fixed offset, for hot paths that read or patch
// one field of an already packed buffer (a switch reading the DLID).
inline uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t load_be64(const uint8_t* p) {
  return uint64_t{load_be32(p)} << 32 | load_be32(p + 4);
}
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  store_be16(p, static_cast<uint16_t>(v >> 16));
  store_be16(p + 2, static_cast<uint16_t>(v));
}
inline void store_be64(uint8_t* p, uint64_t v) {
  store_be32(p, static_cast<uint32_t>(v >> 32));
  store_be32(p + 4, static_cast<uint32_t>(v));
}

}  // namespace ibfab::wire

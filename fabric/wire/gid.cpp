#include "fabric/wire/gid.h"

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses a dotted quad "a.b.c.d" (decimal, 0..255, no leading zeros beyond a
// single "0") into 4 bytes.
bool parse_ipv4(std::string_view s, uint8_t* out) {
  int parts = 0;
  std::size_t i = 0;
  while (parts < 4) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    const std::size_t start = i;
    unsigned v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + static_cast<unsigned>(s[i] - '0');
      if (v > 255 || i - start >= 3) return false;
      ++i;
    }
    if (i - start > 1 && s[start] == '0') return false;
    out[parts++] = static_cast<uint8_t>(v);
    if (parts < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  return i == s.size();
}

}  // namespace

Gid Gid::from(uint64_t prefix, uint64_t guid) {
  Gid g;
  store_be64(g.raw.data(), prefix);
  store_be64(g.raw.data() + 8, guid);
  return g;
}

uint64_t Gid::prefix() const { return load_be64(raw.data()); }
uint64_t Gid::guid() const { return load_be64(raw.data() + 8); }

bool Gid::is_zero() const {
  for (uint8_t b : raw)
    if (b != 0) return false;
  return true;
}

std::optional<Gid> Gid::parse(std::string_view text) {
  // Groups before and after the "::" (if any), as 16-bit values.
  uint16_t head[8];
  uint16_t tail[8];
  int nhead = 0;
  int ntail = 0;
  bool compressed = false;
  std::size_t i = 0;
  const std::size_t n = text.size();
  if (n == 0 || n > 45) return std::nullopt;

  if (n >= 2 && text[0] == ':' && text[1] == ':') {
    compressed = true;
    i = 2;
    if (i == n) return Gid{};
  } else if (text[0] == ':') {
    return std::nullopt;
  }

  while (i < n) {
    uint16_t* groups = compressed ? tail : head;
    int& count = compressed ? ntail : nhead;
    // An IPv4 tail: the rest contains a '.', and there is room for 2 groups.
    const std::size_t next_colon = text.find(':', i);
    const std::string_view field =
        text.substr(i, next_colon == std::string_view::npos ? n - i : next_colon - i);
    if (field.find('.') != std::string_view::npos) {
      if (next_colon != std::string_view::npos) return std::nullopt;
      if (nhead + ntail + 2 > 8) return std::nullopt;
      uint8_t v4[4];
      if (!parse_ipv4(field, v4)) return std::nullopt;
      groups[count++] = static_cast<uint16_t>(v4[0] << 8 | v4[1]);
      groups[count++] = static_cast<uint16_t>(v4[2] << 8 | v4[3]);
      i = n;
      break;
    }
    if (field.empty() || field.size() > 4) return std::nullopt;
    unsigned v = 0;
    for (char c : field) {
      const int h = hex_value(c);
      if (h < 0) return std::nullopt;
      v = v << 4 | static_cast<unsigned>(h);
    }
    if (nhead + ntail >= 8) return std::nullopt;
    groups[count++] = static_cast<uint16_t>(v);
    i += field.size();
    if (i == n) break;
    // text[i] == ':'
    ++i;
    if (i < n && text[i] == ':') {
      if (compressed) return std::nullopt;
      compressed = true;
      ++i;
      if (i == n) break;
    } else if (i == n) {
      return std::nullopt;  // trailing single ':'
    }
  }

  const int total = nhead + ntail;
  if (compressed ? total > 7 : total != 8) return std::nullopt;
  Gid g;
  for (int k = 0; k < nhead; ++k) store_be16(g.raw.data() + 2 * k, head[k]);
  for (int k = 0; k < ntail; ++k) store_be16(g.raw.data() + 2 * (8 - ntail + k), tail[k]);
  return g;
}

std::size_t Gid::format(char* out) const {
  static constexpr char kHex[] = "0123456789abcdef";
  uint16_t w[8];
  for (int k = 0; k < 8; ++k) w[k] = load_be16(raw.data() + 2 * k);
  // Longest run of zero groups (length >= 2), leftmost on ties.
  int best = -1;
  int best_len = 1;
  for (int k = 0; k < 8;) {
    if (w[k] != 0) { ++k; continue; }
    int e = k;
    while (e < 8 && w[e] == 0) ++e;
    if (e - k > best_len) { best = k; best_len = e - k; }
    k = e;
  }
  std::size_t pos = 0;
  for (int k = 0; k < 8; ++k) {
    if (k == best) {
      out[pos++] = ':';
      out[pos++] = ':';
      k += best_len - 1;
      continue;
    }
    if (k != 0 && k != best + best_len) out[pos++] = ':';
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      const unsigned nib = (w[k] >> shift) & 0xfu;
      if (nib != 0 || started || shift == 0) {
        out[pos++] = kHex[nib];
        started = true;
      }
    }
  }
  out[pos] = '\0';
  return pos;
}

std::string Gid::str() const {
  char buf[kMaxTextLen + 1];
  const std::size_t len = format(buf);
  return std::string(buf, len);
}

}  // namespace ibfab::wire

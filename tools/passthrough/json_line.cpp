#include "tools/passthrough/json_line.h"

#include <cstdio>

namespace ibfab::passthrough {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string hex(uint64_t n, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(n));
  return buf;
}

void JsonObject::key(std::string_view k) {
  if (!body_.empty()) body_ += ',';
  body_ += json_string(k);
  body_ += ':';
}

JsonObject& JsonObject::add(std::string_view k, std::string_view text) { return add_json(k, json_string(text)); }
JsonObject& JsonObject::add(std::string_view k, int64_t n) { return add_json(k, std::to_string(n)); }
JsonObject& JsonObject::add(std::string_view k, uint64_t n) { return add_json(k, std::to_string(n)); }
JsonObject& JsonObject::add(std::string_view k, bool b) { return add_json(k, b ? "true" : "false"); }

JsonObject& JsonObject::add_json(std::string_view k, std::string_view json) {
  key(k);
  body_ += json;
  return *this;
}

}  // namespace ibfab::passthrough

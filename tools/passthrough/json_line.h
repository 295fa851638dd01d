#pragma once
// One JSON object, its keys in the order they are added: the passthrough's
// records are compared line by line, so the same outcome must always be
// written as the same bytes.
#include <cstdint>
#include <string>
#include <string_view>

namespace ibfab::passthrough {

class JsonObject {
 public:
  JsonObject& add(std::string_view key, std::string_view text);  // a string, escaped
  JsonObject& add(std::string_view key, const char* text) { return add(key, std::string_view(text)); }
  JsonObject& add(std::string_view key, int64_t n);
  JsonObject& add(std::string_view key, uint64_t n);
  JsonObject& add(std::string_view key, int n) { return add(key, static_cast<int64_t>(n)); }
  JsonObject& add(std::string_view key, uint32_t n) { return add(key, static_cast<uint64_t>(n)); }
  JsonObject& add(std::string_view key, bool b);
  JsonObject& add(std::string_view key, const JsonObject& o) { return add_json(key, o.str()); }
  JsonObject& add_null(std::string_view key) { return add_json(key, "null"); }
  // `json` must already be one JSON value (an array built by the caller).
  JsonObject& add_json(std::string_view key, std::string_view json);

  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

// A call's result: {"rc": rc, "errno": err, or 0 when rc is 0}.
inline JsonObject call_outcome(int rc, int err) { return JsonObject().add("rc", rc).add("errno", rc ? err : 0); }

// `text` as a JSON string, quotes included.
std::string json_string(std::string_view text);
// "0x" and `digits` lowercase hex digits: Q_Keys, LIDs.
std::string hex(uint64_t n, int digits);

}  // namespace ibfab::passthrough

#pragma once
// Work completions as a step's record lists them: one entry per kind
// (status, opcode, and where the op defines it the byte count and whether
// immediate data came), with its count, in the order each kind first came.
// An error's opcode and length are undefined: null.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/passthrough/json_line.h"
#include "tools/passthrough/rdma_host.h"

namespace ibfab::passthrough {

// The JSON array of `list`'s completions from index `from` on. With
// `with_length`, each kind has byte_len and with_imm too (the Completion
// type must have them).
template <class Completion>
std::string completion_tally(const std::vector<Completion>& list, std::size_t from, bool with_length) {
  struct Kind {
    ibv_wc_status status;
    std::optional<ibv_wc_opcode> opcode;
    std::optional<uint32_t> byte_len;
    bool imm;
    uint32_t count;
  };
  std::vector<Kind> kinds;
  for (std::size_t i = from; i < list.size(); ++i) {
    const Completion& c = list[i];
    const bool ok = c.status == IBV_WC_SUCCESS;
    Kind k{c.status, ok ? std::optional(c.opcode) : std::nullopt, std::nullopt, false, 1};
    if constexpr (requires { c.byte_len; c.with_imm; }) {
      if (ok && with_length) {
        k.byte_len = c.byte_len;
        k.imm = c.with_imm;
      }
    }
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& x) {
      return x.status == k.status && x.opcode == k.opcode && x.byte_len == k.byte_len && x.imm == k.imm;
    });
    if (it == kinds.end()) kinds.push_back(k);
    else ++it->count;
  }
  std::string out = "[";
  for (const Kind& k : kinds) {
    JsonObject o;
    o.add("status", ibv_wc_status_str(k.status));
    if (k.opcode) o.add("opcode", wc_opcode_name(*k.opcode));
    else o.add_null("opcode");
    if (with_length) {
      if (k.byte_len) o.add("byte_len", *k.byte_len);
      else o.add_null("byte_len");
      o.add("with_imm", k.imm);
    }
    out += (out.size() > 1 ? "," : "") + o.add("count", k.count).str();
  }
  return out + "]";
}

}  // namespace ibfab::passthrough

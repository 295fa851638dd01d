#include "sm/partitions/partition_reader.h"

#include <cstdio>
#include <optional>
#include <set>

#include "fabric/topology/text_file.h"
#include "sm/sa/sa_enums.h"

namespace ibfab::sm::partitions {
namespace {

constexpr std::string_view kSpace = " \t\n\r";

std::string_view trim(std::string_view s) {
  const std::size_t a = s.find_first_not_of(kSpace);
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(kSpace) - a + 1);
}

// `word` abbreviates `keyword`, as OpenSM's strncmp(word, keyword, strlen(word)).
bool abbrev(std::string_view word, std::string_view keyword) {
  return !word.empty() && keyword.substr(0, word.size()) == word;
}

// A C integer literal (strtoull base 0), the whole text, at most `max`.
std::optional<uint64_t> number(std::string_view s, uint64_t max) {
  if (s.empty() || s.size() > 24) return std::nullopt;
  unsigned base = 10;
  std::size_t i = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    i = 1;
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
    if (d >= base || v > (UINT64_MAX - d) / base) return std::nullopt;
    v = v * base + d;
  }
  if (v > max) return std::nullopt;
  return v;
}

// "name[=value]": both trimmed.
struct Token {
  std::string_view name, value;
  bool has_value = false;
};
Token token(std::string_view s) {
  const std::size_t eq = s.find('=');
  if (eq == std::string_view::npos) return {trim(s), {}, false};
  return {trim(s.substr(0, eq)), trim(s.substr(eq + 1)), true};
}

// The flags a definition or an mgid= line sets for its groups.
struct GroupFlags {
  uint8_t mtu = 4, rate = 3, sl = 0, tclass = 0;
  uint32_t q_key = 0, flow_label = 0;
  uint16_t scope_mask = 0;
};

wire::Gid broadcast_mgid(uint16_t pkey) {
  wire::Gid g;
  g.raw = {0xFF, 0x12, 0x40, 0x1B, static_cast<uint8_t>(pkey >> 8), static_cast<uint8_t>(pkey), 0, 0,
           0,    0,    0,    0,    0xFF, 0xFF, 0xFF, 0xFF};
  return g;
}

class Reader {
 public:
  explicit Reader(const std::string& source) { config_.source = source; }

  PartitionConfig read(std::string_view text) {
    config_.from_file = true;
    add_default(false);
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      ++line_;
      read_line(text.substr(pos, end - pos));
      pos = end + 1;
    }
    return std::move(config_);
  }

  PartitionConfig defaults() {
    add_default(true);
    return std::move(config_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw PartitionError(config_.source + ":" + std::to_string(line_) + ": " + problem);
  }

  // OpenSM's implicit Default partition, made before the file is read.
  void add_default(bool no_file) {
    Partition& p = config_.partitions[kDefaultPKey];
    p.name = "Default";
    p.pkey = kDefaultPKey;
    p.members.push_back(Member{Member::Kind::All, 0, no_file ? Membership::Full : Membership::Limited, false, 0});
    p.members.push_back(Member{Member::Kind::Self, 0, Membership::Full, false, 0});
    if (no_file) add_group(p, broadcast_mgid(0xFFFF), GroupFlags{}, kIpoibQKey);
  }

  void read_line(std::string_view l) {
    if (const std::size_t hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    while (true) {
      const std::size_t start = l.find_first_not_of(kSpace);
      if (start == std::string_view::npos) return;
      l = l.substr(start);
      const std::size_t semi = l.find(';');
      statement(l.substr(0, semi));
      if (semi == std::string_view::npos) return;
      current_ = nullptr;  // the definition ends; its flags go with it
      l = l.substr(semi + 1);
    }
  }

  void statement(std::string_view s) {
    if (!current_) {
      const std::size_t colon = s.find(':');
      if (colon == std::string_view::npos)
        fail("no partition definition found (expected 'Name=PKey[,flags]: members;')");
      header(s.substr(0, colon));
      s = s.substr(colon + 1);
    }
    members(s);
  }

  void header(std::string_view h) {
    flags_ = GroupFlags{};
    ipoib_ = indx0_ = false;
    defmember_ = Membership::Limited;
    std::size_t comma = h.find(',');
    Token first = token(h.substr(0, comma));
    std::string_view name = first.name, id = first.value;
    bool has_id = first.has_value;
    if (!has_id && !name.empty() && name[0] >= '0' && name[0] <= '9') {
      id = name;
      name = {};
      has_id = true;
    }
    while (comma != std::string_view::npos) {
      h = h.substr(comma + 1);
      comma = h.find(',');
      const Token f = token(h.substr(0, comma));
      if (f.name.empty()) fail("bad partition flags: an empty flag");
      partition_flag(f);
    }
    uint16_t pkey = 0;
    if (has_id) {
      const auto v = number(id, 0xFFFF);
      if (!v) fail("bad partition definition: P_Key '" + std::string(id) + "' is not a number up to 0xffff");
      pkey = static_cast<uint16_t>(*v & 0x7FFF);
      if (pkey == 0) fail("bad partition definition: P_Key '" + std::string(id) + "' has base 0");
    } else {
      pkey = named_or_new(name);
    }
    auto [it, fresh] = config_.partitions.try_emplace(pkey);
    current_ = &it->second;
    if (fresh) {
      current_->name = name.empty() ? hex4(pkey) : std::string(name);
      current_->pkey = pkey;
      current_->line = line_;
    }
    // Without QoS (OpenSM's default) a partition's SL is the default SL.
    flags_.sl = 0;
    if (ipoib_) add_group(*current_, broadcast_mgid(static_cast<uint16_t>(pkey | 0x8000)), flags_,
                          flags_.q_key ? flags_.q_key : kIpoibQKey);
  }

  static std::string hex4(uint16_t v) {
    char b[8];
    std::snprintf(b, sizeof b, "%04x", v);
    return b;
  }

  uint16_t named_or_new(std::string_view name) {
    if (!name.empty())
      for (const auto& [k, p] : config_.partitions)
        if (p.name == name) return k;
    while (counter_ < kDefaultPKey - 1) {
      const uint16_t k = ++counter_;
      if (!config_.partitions.count(k)) return k;
    }
    fail("no P_Key left to give partition '" + std::string(name) + "'");
  }

  // OpenSM's group flags (parse_group_flag); false if `f` is none of them.
  bool group_flag(const Token& f, GroupFlags& g) {
    auto value = [&](uint64_t lo, uint64_t hi) -> uint64_t {
      const auto v = f.has_value ? number(f.value, hi) : std::nullopt;
      if (!v || *v < lo) fail("flag '" + std::string(f.name) + "' requires a value from " + std::to_string(lo) +
                              " to " + std::to_string(hi));
      return *v;
    };
    if (abbrev(f.name, "mtu")) {
      g.mtu = static_cast<uint8_t>(value(1, 5));
    } else if (abbrev(f.name, "rate")) {
      g.rate = static_cast<uint8_t>(value(2, 63));
      if (!sa_enum::valid_rate(g.rate)) fail("flag 'rate' requires a valid SA rate value");
    } else if (abbrev(f.name, "scope")) {
      g.scope_mask = static_cast<uint16_t>(g.scope_mask | 1u << value(1, 15));
    } else if (abbrev(f.name, "Q_Key")) {
      g.q_key = static_cast<uint32_t>(value(0, 0xFFFFFFFF));
    } else if (abbrev(f.name, "TClass")) {
      g.tclass = static_cast<uint8_t>(value(0, 255));
    } else if (abbrev(f.name, "sl")) {
      g.sl = static_cast<uint8_t>(value(0, 15));
    } else if (abbrev(f.name, "FlowLabel")) {
      g.flow_label = static_cast<uint32_t>(value(0, 0xFFFFF));
    } else {
      return false;
    }
    return true;
  }

  void partition_flag(const Token& f) {
    if (group_flag(f, flags_)) return;
    if (abbrev(f.name, "ipoib")) {
      ipoib_ = true;
    } else if (abbrev(f.name, "defmember")) {
      const auto m = f.has_value ? membership(f.value) : std::nullopt;
      if (!m) fail("flag 'defmember' requires a value (full, limited or both)");
      defmember_ = *m;
    } else if (f.name == "indx0") {
      indx0_ = true;
    } else {
      fail("unrecognized partition flag '" + std::string(f.name) + "'");
    }
  }

  static std::optional<Membership> membership(std::string_view v) {
    if (abbrev(v, "full")) return Membership::Full;
    if (abbrev(v, "both")) return Membership::Both;
    if (abbrev(v, "limited")) return Membership::Limited;
    return std::nullopt;
  }

  void members(std::string_view list) {
    while (true) {
      const std::size_t comma = list.find(',');
      const Token t = token(list.substr(0, comma));
      if (t.name == "mgid") return group(t.value, comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1));
      member(t);
      if (comma == std::string_view::npos) return;
      list = list.substr(comma + 1);
    }
  }

  void member(const Token& t) {
    if (t.name.empty() || abbrev(t.name, "NONE")) {
      if (t.has_value && t.name.empty()) fail("bad PortGUID: a membership with no port");
      return;
    }
    Member m;
    m.line = line_;
    m.indx0 = indx0_;
    m.membership = defmember_;
    if (t.has_value) {
      const auto v = membership(t.value);
      if (!v) fail("unrecognized port flag '" + std::string(t.value) + "' (full, limited or both)");
      m.membership = *v;
    }
    if (abbrev(t.name, "ALL")) m.kind = Member::Kind::All;
    else if (abbrev(t.name, "ALL_CAS")) m.kind = Member::Kind::AllCas;
    else if (abbrev(t.name, "ALL_SWITCHES")) m.kind = Member::Kind::AllSwitches;
    else if (abbrev(t.name, "ALL_ROUTERS")) m.kind = Member::Kind::AllRouters;
    else if (abbrev(t.name, "SELF")) m.kind = Member::Kind::Self;
    else {
      const auto g = number(t.name, UINT64_MAX);
      if (!g || *g == 0) fail("bad PortGUID '" + std::string(t.name) + "'");
      m.kind = Member::Kind::Guid;
      m.guid = *g;
    }
    current_->members.push_back(m);
  }

  // An mgid= line: the group inherits the definition's flags (not TClass,
  // as in OpenSM) and takes its own.
  void group(std::string_view mgid_text, std::string_view flag_list) {
    const auto mgid = wire::Gid::parse(mgid_text);
    if (!mgid || !mgid->is_multicast()) fail("mgid \"" + std::string(mgid_text) + "\": gid is not multicast");
    GroupFlags g = flags_;
    g.tclass = 0;
    while (true) {
      const std::size_t comma = flag_list.find(',');
      const Token f = token(flag_list.substr(0, comma));
      if (!f.name.empty() && !group_flag(f, g)) fail("unrecognized mgroup flag '" + std::string(f.name) + "'");
      if (comma == std::string_view::npos) break;
      flag_list = flag_list.substr(comma + 1);
    }
    wire::Gid m = *mgid;
    uint32_t q_key = g.q_key;
    const uint16_t sig = static_cast<uint16_t>(m.raw[2] << 8 | m.raw[3]);
    if (sig == 0x401B || sig == 0x601B) {
      const uint16_t bits = static_cast<uint16_t>(m.raw[4] << 8 | m.raw[5]);
      if (m != broadcast_mgid(0xFFFF) && bits != 0 && bits != current_->pkey)
        fail("IP multicast group " + m.str() + " has P_Key bits 0x" + hex4(bits) + ", not the partition's 0x" +
             hex4(current_->pkey));
      if (g.rate != flags_.rate) fail("IP multicast group " + m.str() + " has a rate other than its partition's");
      if (g.mtu != flags_.mtu) fail("IP multicast group " + m.str() + " has an MTU other than its partition's");
      const uint16_t pkey = static_cast<uint16_t>(current_->pkey | 0x8000);
      m.raw[4] = static_cast<uint8_t>(pkey >> 8);
      m.raw[5] = static_cast<uint8_t>(pkey);
      if (q_key == 0) q_key = kIpoibQKey;
    }
    add_group(*current_, m, g, q_key);
  }

  // One group per scope asked for (the MGID's scope nibble replaced), else
  // one at link-local scope, as OpenSM's __create_mgrp and add_mcgroup; an
  // MGID already made is not made again.
  void add_group(Partition& p, const wire::Gid& mgid, const GroupFlags& g, uint32_t q_key) {
    for (uint8_t scope = 0; scope < 16; ++scope) {
      if (g.scope_mask ? !(g.scope_mask & 1u << scope) : scope != 2) continue;
      GroupDef d;
      d.mgid = mgid;
      d.mgid.raw[1] = static_cast<uint8_t>((d.mgid.raw[1] & 0xF0) | scope);
      if (!seen_.insert(d.mgid).second) continue;
      d.mtu = g.mtu;
      d.rate = g.rate;
      d.sl = g.sl;
      d.scope = scope;
      d.q_key = q_key;
      d.tclass = g.tclass;
      d.flow_label = g.flow_label;
      d.p_key = static_cast<uint16_t>(p.pkey | 0x8000);
      d.line = line_;
      d.order = groups_++;
      p.groups.push_back(d);
    }
  }

  PartitionConfig config_;
  unsigned line_ = 0;
  Partition* current_ = nullptr;
  GroupFlags flags_;
  bool ipoib_ = false, indx0_ = false;
  Membership defmember_ = Membership::Limited;
  uint16_t counter_ = 0;
  uint32_t groups_ = 0;
  std::set<wire::Gid> seen_;
};

}  // namespace

PartitionConfig read_partitions(std::string_view text, const std::string& source) {
  if (text.size() > kMaxFileBytes)
    throw PartitionError(source + ": larger than " + std::to_string(kMaxFileBytes) + " bytes");
  if (text.find('\0') != std::string_view::npos) throw PartitionError(source + ": holds a NUL byte (not a text file)");
  return Reader(source).read(text);
}

PartitionConfig load_partitions(const std::string& path) {
  std::string text;
  try {
    text = topo::read_text_file(path, kMaxFileBytes, "partition files");
  } catch (const topo::TextFileError& e) {
    throw PartitionError(e.what());
  }
  return read_partitions(text, path);
}

PartitionConfig default_partitions() { return Reader("(default)").defaults(); }

}  // namespace ibfab::sm::partitions

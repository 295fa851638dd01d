#include "tools/scenario/action_chunks.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ibfab::scenario {
namespace {

struct Line {
  std::size_t begin = 0, end = 0;  // [begin, end) in the text, without the newline
};

std::size_t indent_of(const std::string& t, const Line& l) {
  std::size_t i = l.begin;
  while (i < l.end && t[i] == ' ') ++i;
  return i - l.begin;
}

// Blank, or nothing but a comment.
bool empty_line(const std::string& t, const Line& l) {
  const std::size_t i = l.begin + indent_of(t, l);
  return i == l.end || t[i] == '#';
}

// A sequence item at column `indent`: a dash, then a space or the line's end.
bool item_at(const std::string& t, const Line& l, std::size_t indent) {
  const std::size_t i = l.begin + indent;
  return indent_of(t, l) == indent && i < l.end && t[i] == '-' && (i + 1 == l.end || t[i + 1] == ' ');
}

}  // namespace

ActionChunks ActionChunks::split(const std::string& text) {
  ActionChunks c;
  c.text_ = &text;
  c.rest_ = text;
  // Anchors and aliases resolve only within one document: a text that may
  // hold any is read whole, as YAML means it.
  if (text.find_first_of("&*") != std::string::npos) return c;
  std::vector<Line> lines;
  for (std::size_t b = 0; b <= text.size();) {
    std::size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    lines.push_back({b, e});
    b = e + 1;
  }
  std::size_t key = 0;
  while (key < lines.size()) {
    const Line& l = lines[key];
    if (text.compare(l.begin, 8, "actions:") == 0 && empty_line(text, {l.begin + 8, l.end})) break;
    ++key;
  }
  if (key == lines.size()) return c;
  // The block: every following line that is empty or indented, or an item
  // at column 0 (a sequence may sit at its key's own indentation).
  std::size_t end = key + 1, indent = std::string::npos;
  for (; end < lines.size(); ++end) {
    const Line& l = lines[end];
    if (empty_line(text, l)) continue;
    const std::size_t in = indent_of(text, l);
    if (indent == std::string::npos) {
      if (!item_at(text, l, in)) return c;  // not a block sequence: read whole
      indent = in;
    }
    if (in == 0 && !item_at(text, l, 0)) break;  // the next top-level key
    if (in < indent) return c;
    if (item_at(text, l, indent)) c.items_.push_back({end, l.begin});
  }
  if (c.items_.empty()) return c;
  // The rest keeps every line: "actions: []" and the block's lines emptied.
  std::string rest;
  rest.reserve(text.size());
  rest.append(text, 0, lines[key].begin);
  rest += "actions: []";
  for (std::size_t i = key + 1; i < end; ++i) rest += '\n';
  if (end < lines.size()) rest.append(text, lines[end].begin - 1, std::string::npos);
  c.rest_ = std::move(rest);
  c.end_ = end < lines.size() ? lines[end].begin : text.size();
  return c;
}

std::string ActionChunks::chunk(std::size_t i) const {
  const Item& first = items_[i * kItems];
  const std::size_t next = (i + 1) * kItems;
  const std::size_t stop = next < items_.size() ? items_[next].offset : end_;
  std::string out(first.line, '\n');
  out.append(*text_, first.offset, stop - first.offset);
  return out;
}

void sort_by_time(std::vector<Action>& actions) {
  std::vector<std::size_t> order(actions.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&actions](std::size_t x, std::size_t y) { return actions[x].at < actions[y].at; });
  // Position i takes actions[order[i]]: follow each cycle of the permutation.
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    Action held = std::move(actions[i]);
    std::size_t j = i;
    while (order[j] != i) {
      actions[j] = std::move(actions[order[j]]);
      const std::size_t next = order[j];
      order[j] = j;
      j = next;
    }
    actions[j] = std::move(held);
    order[j] = j;
  }
}

}  // namespace ibfab::scenario

#pragma once
// Splits a scenario's text so that its `actions:` list can be read a chunk
// at a time: yaml-cpp keeps about 4 KB of nodes per action line while a
// document is loaded, so a 40,000-action file loaded whole peaks near
// 200 MB; read in chunks of kItems, it peaks at one chunk's nodes.
//
// Only the common form is split: a top-level `actions:` key alone on its
// line (a comment may follow) followed by a block sequence ("- " items,
// each item's further lines indented deeper than its dash). `rest` is the
// text with that key's value replaced by `[]` and every item line blanked,
// so it has the same lines; each chunk is a YAML sequence of whole items,
// preceded by empty lines so that yaml-cpp's marks give the file's line
// numbers. Anything else (a flow list, no actions, a text with an '&' or
// a '*' anywhere, since an alias must see its anchor) gives no chunks and
// the text unchanged: it is read whole.
#include <string>
#include <vector>

#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

// `text` must outlive the ActionChunks made from it.
class ActionChunks {
 public:
  static constexpr std::size_t kItems = 256;
  static ActionChunks split(const std::string& text);

  const std::string& rest() const { return rest_; }
  std::size_t items() const { return items_.size(); }
  std::size_t chunks() const { return items_.empty() ? 0 : (items_.size() + kItems - 1) / kItems; }
  // Chunk i's text, made when asked, so that one chunk at a time is held.
  std::string chunk(std::size_t i) const;

 private:
  struct Item {
    std::size_t line = 0;    // 0-based line of its dash in the file
    std::size_t offset = 0;  // where that line starts in the text
  };
  const std::string* text_ = nullptr;
  std::string rest_;
  std::vector<Item> items_;
  std::size_t end_ = 0;  // where the actions block ends in the text
};

// Orders actions by time, file order on ties (as std::stable_sort), in
// place: through a list of indices, 8 bytes an action, where
// std::stable_sort would take a buffer as large as the actions.
void sort_by_time(std::vector<Action>& actions);

}  // namespace ibfab::scenario

#pragma once
// Which objects' rings (QPs, SRQs) the engine looks at in a round of its
// loop. Looking at every ring every round makes a round cost O(objects),
// and with thousands of QPs most are idle. An object found with work is
// active: it is looked at every round until it has had none for
// kQuietRounds rounds. The others are looked at kSlice a round, in turn, so
// that each is seen within size() / kSlice rounds; with kSlice objects or
// fewer, every one is looked at every round. run_all() looks at every one;
// the engine calls it before it sleeps, so that no work posted while it
// was awake (and rang no doorbell) waits.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibfab::api {

template <class T>
class RingScan {
 public:
  static constexpr std::size_t kSlice = 64;
  static constexpr uint32_t kQuietRounds = 4096;

  void add(T* object) { all_.push_back({object}); }
  // The last object takes the removed one's place (the order of a scan is
  // no promise).
  void remove(T* object) {
    auto it = std::find_if(all_.begin(), all_.end(), [&](const Entry& e) { return e.object == object; });
    if (it == all_.end()) return;
    const std::size_t i = static_cast<std::size_t>(it - all_.begin()), last = all_.size() - 1;
    if (it->active) std::erase(active_, i);
    if (i != last) {
      all_[i] = all_[last];
      std::replace(active_.begin(), active_.end(), last, i);
    }
    all_.pop_back();
    if (cursor_ >= all_.size()) cursor_ = 0;
  }
  bool empty() const { return all_.empty(); }
  std::size_t size() const { return all_.size(); }

  // `look(T&)` takes an object's work and says whether there was any.
  template <class Look>
  bool run(Look&& look) {
    if (all_.size() <= kSlice) return run_all(look);
    bool work = false;
    for (std::size_t i = 0; i < active_.size();) {
      Entry& e = all_[active_[i]];
      if (look(*e.object)) {
        e.quiet = 0;
        work = true;
      } else if (++e.quiet > kQuietRounds) {
        e.active = false;
        active_[i] = active_.back();
        active_.pop_back();
        continue;
      }
      ++i;
    }
    for (std::size_t n = 0; n < kSlice; ++n) {
      const std::size_t i = cursor_;
      cursor_ = cursor_ + 1 == all_.size() ? 0 : cursor_ + 1;
      if (!all_[i].active && look(*all_[i].object)) {
        activate(i);
        work = true;
      }
    }
    return work;
  }

  template <class Look>
  bool run_all(Look&& look) {
    bool work = false;
    for (std::size_t i = 0; i < all_.size(); ++i)
      if (look(*all_[i].object)) {
        work = true;
        if (!all_[i].active) activate(i);
        all_[i].quiet = 0;
      }
    return work;
  }

 private:
  struct Entry {
    T* object = nullptr;
    uint32_t quiet = 0;
    bool active = false;
  };
  void activate(std::size_t i) {
    all_[i].active = true;
    all_[i].quiet = 0;
    active_.push_back(i);
  }

  std::vector<Entry> all_;
  std::vector<std::size_t> active_;  // indices into all_
  std::size_t cursor_ = 0;
};

}  // namespace ibfab::api

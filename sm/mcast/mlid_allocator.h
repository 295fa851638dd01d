#pragma once
// MLID allocation for multicast groups. Chosen by name ("lowest-free",
// "round-robin"); each documents in one line what it optimises.
//
// Both honour a requested MLID that is in range and free (the SA's rule:
// a join may name its MLID); they differ in what they pick otherwise. The
// range is passed on every call because it follows the subnet: 0xC000 ..
// min(0xFFFE, 0xC000 + smallest MulticastFDBCap - 1).
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace ibfab::sm {

struct MlidRange {
  uint16_t first = 0xC000;
  uint16_t last = 0xBFFF;  // inclusive; last < first: empty
  bool contains(uint16_t mlid) const { return mlid >= first && mlid <= last; }
  // The range of a subnet whose smallest MulticastFDBCap is `cap`.
  static MlidRange for_cap(uint16_t cap);
};

// Tracks which MLIDs are in use; subclasses choose among the free ones.
class MlidAllocator {
 public:
  virtual ~MlidAllocator() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;

  // Marks and returns `requested` if it is in `range` and free, else an
  // MLID the policy picks from the free ones in `range`; nullopt when
  // `range` has none free (the SA then answers with no resources).
  std::optional<uint16_t> allocate(std::optional<uint16_t> requested, MlidRange range);
  // Marks `mlid` free; freeing a free MLID does nothing.
  void free(uint16_t mlid);
  bool in_use(uint16_t mlid) const;
  std::size_t used() const { return used_count_; }

 protected:
  // A free MLID of `range` (at least one is free).
  virtual uint16_t pick(MlidRange range) = 0;
  bool is_free(uint16_t mlid) const { return !in_use(mlid); }

 private:
  std::vector<bool> used_;  // index = mlid - 0xC000
  std::size_t used_count_ = 0;
};

// "lowest-free" (OpenSM): the lowest free MLID. O(range) worst case.
class LowestFreeMlid final : public MlidAllocator {
 public:
  std::string_view name() const override { return "lowest-free"; }
  std::string_view description() const override;

 protected:
  uint16_t pick(MlidRange range) override;
};

// "round-robin": the next free MLID after the last one this policy picked,
// wrapping to the range's start (a requested MLID does not move the
// cursor). Freed MLIDs are reused as late as possible, so a stale MFT entry
// or a late packet for a deleted group rarely hits a new one. O(range)
// worst case.
class RoundRobinMlid final : public MlidAllocator {
 public:
  std::string_view name() const override { return "round-robin"; }
  std::string_view description() const override;

 protected:
  uint16_t pick(MlidRange range) override;

 private:
  std::optional<uint16_t> last_;
};

// nullptr for an unknown name.
std::unique_ptr<MlidAllocator> make_mlid_allocator(std::string_view name);
std::vector<std::string_view> mlid_allocator_names();

}  // namespace ibfab::sm

#pragma once
// Join admission: whether the SA lets a port join one more multicast
// group. Chosen by name ("unlimited", "max-groups-per-port:N"); each
// documents in one line what it optimises.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ibfab::sm {

class JoinAdmission {
 public:
  virtual ~JoinAdmission() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // `groups` = the MLIDs the port is a member of now; `already_member` =
  // the MLID asked for is one of them (a repeat join is always admitted).
  virtual bool admit(std::size_t groups, bool already_member) const = 0;
};

// "unlimited" (OpenSM): every join is admitted.
class UnlimitedJoins final : public JoinAdmission {
 public:
  std::string_view name() const override { return "unlimited"; }
  std::string_view description() const override;
  bool admit(std::size_t, bool) const override { return true; }
};

// "max-groups-per-port:N": a port is a member of at most N MLIDs.
class MaxGroupsPerPort final : public JoinAdmission {
 public:
  explicit MaxGroupsPerPort(std::size_t limit);
  std::string_view name() const override { return name_; }
  std::string_view description() const override;
  bool admit(std::size_t groups, bool already_member) const override {
    return already_member || groups < limit_;
  }
  std::size_t limit() const { return limit_; }

 private:
  std::size_t limit_;
  std::string name_;
};

// nullptr for an unknown name or a malformed N (N: 1 to 9 decimal digits).
std::unique_ptr<JoinAdmission> make_join_admission(std::string_view name);
std::vector<std::string_view> join_admission_names();  // "max-groups-per-port:N" as a pattern

}  // namespace ibfab::sm

#include "api/server/fault_schedule.h"

#include <array>
#include <charconv>
#include <stdexcept>

namespace ibfab::api {

namespace {

// "link-down L5[5]", "link-loss S1[3] 0.25".
std::string action_text(const Fault& f) {
  std::string text = std::string(to_string(f.kind)) + " " + f.link.text;
  if (f.kind == Fault::Kind::LinkLoss) {
    std::array<char, 32> p;
    const auto end = std::to_chars(p.data(), p.data() + p.size(), f.probability).ptr;
    text += " " + std::string(p.data(), end);
  }
  return text;
}

}  // namespace

const char* to_string(Fault::Kind kind) {
  switch (kind) {
    case Fault::Kind::LinkDown: return "link-down";
    case Fault::Kind::LinkUp: return "link-up";
    case Fault::Kind::LinkLoss: return "link-loss";
  }
  return "?";
}

std::string fault_text(const Fault& f) { return f.at.exact_str() + " " + action_text(f); }

std::string fault_log_line(const Fault& f) { return "fault at " + f.at.exact_str() + ": " + action_text(f); }

FaultSchedule::FaultSchedule(fabric::Fabric& fabric, std::vector<Fault> faults,
                             std::function<void(const std::string&)> log)
    : fabric_(fabric), log_(std::move(log)) {
  faults_.reserve(faults.size());
  for (Fault& f : faults) {
    if (f.at < sim::Time::zero()) throw std::invalid_argument(f.origin + ": a fault's time cannot be negative");
    if (f.kind == Fault::Kind::LinkLoss && !(f.probability >= 0 && f.probability <= 1))
      throw std::invalid_argument(f.origin + ": the probability must be in [0, 1]");
    std::string problem;
    fabric::Link* link = fabric::find_link(fabric, f.link, problem);
    if (!link) throw std::invalid_argument(f.origin + ": " + problem);
    faults_.push_back({std::move(f), link});
  }
}

void FaultSchedule::start() {
  if (started_) return;
  started_ = true;
  for (std::size_t i = 0; i < faults_.size(); ++i) fabric_.sim().schedule(faults_[i].fault.at, [this, i] { apply(i); });
}

void FaultSchedule::apply(std::size_t i) {
  const Bound& b = faults_[i];
  switch (b.fault.kind) {
    case Fault::Kind::LinkDown: fabric_.set_link_up(*b.link, false); break;
    case Fault::Kind::LinkUp: fabric_.set_link_up(*b.link, true); break;
    case Fault::Kind::LinkLoss: fabric_.set_link_loss(*b.link, b.fault.probability); break;
  }
  if (log_) log_(fault_log_line(b.fault));
}

}  // namespace ibfab::api

#include "tools/scenario/progress_line.h"

#include <chrono>

#include "sim/time.h"

namespace ibfab::scenario {
namespace {

// 1234567 -> "1,234,567"
std::string grouped(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

ProgressLine::ProgressLine(std::FILE* out, std::string name, const sim::Progress& progress)
    : out_(out), name_(std::move(name)), progress_(progress) {
  if (out_) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string ProgressLine::format(const std::string& name, const sim::Progress::Reading& r, double seconds) {
  std::string line = "ibfab: " + name + ": " + (r.phase ? r.phase : "starting");
  if (r.total != 0) {
    const uint64_t done = r.done < r.total ? r.done : r.total;
    line += " " + std::to_string(done * 100 / r.total) + "% (" + grouped(done) + " of " + grouped(r.total) + " " +
            r.unit + ")";
  } else if (r.done != 0) {
    line += " (" + grouped(r.done) + " " + r.unit + ")";
  }
  if (r.events != 0) {
    char events[32];
    std::snprintf(events, sizeof events, "%.1f M", static_cast<double>(r.events) / 1e6);
    line += ", " + sim::Time::ps(r.now_ps).str() + " simulated, " + events + " events";
  }
  char wall[32];
  std::snprintf(wall, sizeof wall, ", %.0f s", seconds);
  return line + wall;
}

void ProgressLine::loop() {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (wake_.wait_for(lock, std::chrono::seconds(3), [this] { return stop_; })) return;
  do {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(out_, "%s\n", format(name_, progress_.read(), seconds).c_str());
    std::fflush(out_);
  } while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; }));
}

}  // namespace ibfab::scenario

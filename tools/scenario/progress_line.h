#pragma once
// A progress line on a stream (stderr) for long jobs: from a thread of its
// own, once a second after the first three, what sim::Progress says: the
// phase, its share done, the simulated clock and the events run, e.g.
//
//   ibfab: big: LFTs 45% (1,323,000 of 2,940,000 SMPs), 120.4ms simulated, 20.1 M events, 12 s
//
// Nothing is printed for a job done within three seconds. The simulation
// thread only stores into sim::Progress; the formatting happens here.
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "sim/progress.h"

namespace ibfab::scenario {

class ProgressLine {
 public:
  // Starts printing `name`'s progress to `out` (nullptr: never prints).
  ProgressLine(std::FILE* out, std::string name, const sim::Progress& progress);
  ~ProgressLine();  // stops the thread (prints nothing more)
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The line for `r` after `seconds` of wall time (no newline).
  static std::string format(const std::string& name, const sim::Progress::Reading& r, double seconds);

 private:
  void loop();

  std::FILE* out_;
  std::string name_;
  const sim::Progress& progress_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ibfab::scenario

// core/progress.h - a progress line on stderr for long work: done/total, rate and ETA, redrawn at most 4 times a
// second.
#pragma once

#include <chrono>
#include <string>

namespace llmco2 {

// Seconds of wall time since `start` (steady clock).
double seconds_since(std::chrono::steady_clock::time_point start);

class Progress {
 public:
  Progress(std::string what, long total, bool enabled = true);
  void update(long done);  // cheap when called often; throws Interrupted when an interrupt is requested
  void finish();           // prints the final line with the elapsed time

 private:
  void print(long done, bool final);
  std::string what_;
  long total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace llmco2

// core/interrupt.h - cooperative interruption of long work: a process-wide request that the loops which report
// progress (Progress::update) and predict_many check between steps, so that a host (the Python bindings on Ctrl-C)
// can stop a call in progress; the work then throws Interrupted and unwinds as for any error.
#pragma once

#include "core/error.h"

namespace llmco2 {

class Interrupted : public Error {
 public:
  Interrupted() : Error("interrupted") {}
};

// Sets (true) or clears (false) the request; every call in progress in the process sees it.
void request_interrupt(bool on);
bool interrupt_requested();
// Throws Interrupted when an interrupt is requested.
inline void check_interrupt() {
  if (interrupt_requested()) throw Interrupted();
}

}  // namespace llmco2

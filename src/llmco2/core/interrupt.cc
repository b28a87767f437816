// core/interrupt.cc - the process-wide interrupt request.
#include "core/interrupt.h"

#include <atomic>

namespace llmco2 {
namespace {

std::atomic<bool> g_interrupt{false};

}  // namespace

void request_interrupt(bool on) { g_interrupt.store(on, std::memory_order_relaxed); }
bool interrupt_requested() { return g_interrupt.load(std::memory_order_relaxed); }

}  // namespace llmco2

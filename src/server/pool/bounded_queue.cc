// server/pool/bounded_queue.cc - the worker pool with a bounded backlog and its rejecting thread.
#include "server/pool/bounded_queue.h"

namespace llmco2::server {
namespace {

thread_local bool t_rejecting = false;

}  // namespace

bool is_rejecting_thread() { return t_rejecting; }

TaskLine::TaskLine(size_t threads, size_t max_queued, bool rejecting) : max_queued_(max_queued) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this, rejecting] { work(rejecting); });
}

TaskLine::~TaskLine() { shutdown(); }

bool TaskLine::try_enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || tasks_.size() + busy_ >= threads_.size() + max_queued_) return false;
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void TaskLine::shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void TaskLine::work(bool rejecting) {
  t_rejecting = rejecting;
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
      ++busy_;
    }
    task();
    std::lock_guard lock(mutex_);
    --busy_;
  }
}

BoundedQueue::BoundedQueue(size_t threads, size_t max_queued, size_t max_rejecting)
    : workers_(threads, max_queued, false), rejecter_(1, max_rejecting, true) {}

// Beyond both bounds the connection is answered 503 on the listening thread itself: the request is still read
// (bounded by the read timeout) so that the client sees the answer rather than a reset.
void BoundedQueue::enqueue(std::function<void()> task) {
  if (workers_.try_enqueue(task)) return;
  if (rejecter_.try_enqueue(task)) return;
  t_rejecting = true;
  task();
  t_rejecting = false;
}

void BoundedQueue::shutdown() {
  workers_.shutdown();
  rejecter_.shutdown();
}

}  // namespace llmco2::server

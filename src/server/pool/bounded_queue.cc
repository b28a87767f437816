// server/pool/bounded_queue.cc - the worker pool with a bounded backlog.
#include "server/pool/bounded_queue.h"

namespace llmco2::server {

TaskLine::TaskLine(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

TaskLine::~TaskLine() { shutdown(); }

bool TaskLine::try_enqueue(std::function<void()> task, std::function<void()> then) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || tasks_.size() + busy_ >= threads_.size() + max_queued_) return false;
    tasks_.emplace_back(std::move(task), std::move(then));
  }
  wake_.notify_one();
  return true;
}

size_t TaskLine::waiting() {
  std::lock_guard lock(mutex_);
  return tasks_.size();
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

void TaskLine::work() {
  for (;;) {
    std::pair<std::function<void()>, std::function<void()>> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
      ++busy_;
    }
    task.first();
    {
      std::lock_guard lock(mutex_);
      --busy_;
    }
    if (task.second) task.second();
  }
}

}  // namespace llmco2::server

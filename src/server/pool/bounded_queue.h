// server/pool/bounded_queue.h - the worker pool of `llmco2 serve`: a fixed set of threads and a bounded backlog of
// whole requests; a request beyond both is refused at once (the server answers it 503), never queued without bound.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace llmco2::server {

// A FIFO of tasks run by a fixed set of threads; try_enqueue refuses (returns false) when every thread is busy and
// `max_queued` tasks wait already, so at most threads + max_queued tasks are held.
class TaskLine {
 public:
  TaskLine(size_t threads, size_t max_queued);
  ~TaskLine();
  TaskLine(const TaskLine&) = delete;
  TaskLine& operator=(const TaskLine&) = delete;
  // `then`, if given, runs on the same thread after the task once its slot is free again, so that what it signals
  // (a connection ready for its next request) can be enqueued at once.
  bool try_enqueue(std::function<void()> task, std::function<void()> then = {});
  void shutdown();   // runs what is queued, then joins the threads
  size_t waiting();  // tasks queued and not yet taken by a thread

 private:
  void work();
  size_t max_queued_;
  std::deque<std::pair<std::function<void()>, std::function<void()>>> tasks_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  size_t busy_ = 0;  // threads running a task
  bool stopping_ = false;
};

}  // namespace llmco2::server

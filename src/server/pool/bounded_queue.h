// server/pool/bounded_queue.h - cpp-httplib's task queue with a bounded backlog: a fixed pool of workers, at most
// `max_queued` connections waiting for one, and every connection beyond that handed to one rejecting thread that
// answers 503 at once (cpp-httplib 0.11's ThreadPool queues without bound and has no hook to refuse a connection).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace llmco2::server {

// True on the thread that answers connections the pool had no room for (the pre-routing handler answers 503 there).
bool is_rejecting_thread();

// A FIFO of tasks run by a fixed set of threads; enqueue refuses (returns false) when every thread is busy and
// `max_queued` tasks wait already, so at most threads + max_queued tasks are held.
class TaskLine {
 public:
  TaskLine(size_t threads, size_t max_queued, bool rejecting);
  ~TaskLine();
  bool try_enqueue(std::function<void()> task);
  void shutdown();  // runs what is queued, then joins the threads

 private:
  void work(bool rejecting);

  size_t max_queued_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  size_t busy_ = 0;  // threads running a task
  bool stopping_ = false;
};

class BoundedQueue : public httplib::TaskQueue {
 public:
  // `threads` workers, `max_queued` connections waiting; `max_rejecting` connections waiting for their 503.
  BoundedQueue(size_t threads, size_t max_queued, size_t max_rejecting = 64);
  void enqueue(std::function<void()> task) override;
  void shutdown() override;

 private:
  TaskLine workers_, rejecter_;
};

}  // namespace llmco2::server

// Pool: one worker thread per running child (each runs run_child_stoppable); the
// thread that called run() starts children, and runs every on_done callback, so
// callbacks need no locking of their own and may submit() more work.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "runner/child_process.h"
#include "runner/lane_share.h"
#include "runner/runner.h"

namespace cudadiag::runner {

struct Pool::Impl {
  PoolOptions opts;
  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<ChildSpec> specs;  // by id; a spec is moved out when it starts
  std::deque<size_t> queue;      // ids waiting to start
  std::map<size_t, std::thread> running;
  std::map<size_t, int> lane_of_running;  // id -> lane
  std::map<int, int> running_per_lane;
  std::deque<std::pair<size_t, ChildOutcome>> finished;
  std::vector<size_t> never_started;

  bool stop_requested() const { return opts.stop && opts.stop->load(); }

  // The next queued child the lanes allow (runner/lane_share.h); false when none may start.
  bool start_next() {  // with mu held
    std::vector<int> lanes;
    lanes.reserve(queue.size());
    for (size_t id : queue) lanes.push_back(specs[id].lane);
    const auto pick = next_to_start(lanes, running_per_lane, static_cast<int>(running.size()), opts.jobs, opts.lanes);
    if (!pick) return false;
    const size_t id = queue[*pick];
    queue.erase(queue.begin() + static_cast<long>(*pick));
    lane_of_running[id] = specs[id].lane;
    ++running_per_lane[specs[id].lane];
    start(id);
    return true;
  }

  void start(size_t id) {  // with mu held
    ChildSpec spec = std::move(specs[id]);
    running.emplace(id, std::thread([this, id, spec = std::move(spec)] {
      ChildOutcome outcome = detail::run_child_stoppable(spec, opts.stop, opts.stop_grace);
      std::lock_guard<std::mutex> lock(mu);
      finished.emplace_back(id, std::move(outcome));
      cv.notify_all();
    }));
  }
};

Pool::Pool(PoolOptions opts) : impl_(new Impl{}) {
  impl_->opts = opts;
  if (impl_->opts.jobs < 1) impl_->opts.jobs = 1;
}

Pool::~Pool() {
  // run() joins every thread it started; this covers an exception in a callback.
  for (auto& [id, t] : impl_->running)
    if (t.joinable()) t.join();
  delete impl_;
}

size_t Pool::submit(ChildSpec spec) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->specs.push_back(std::move(spec));
  const size_t id = impl_->specs.size() - 1;
  impl_->queue.push_back(id);
  return id;
}

void Pool::run(const std::function<void(size_t id, const ChildOutcome&)>& on_done) {
  Impl& im = *impl_;
  std::unique_lock<std::mutex> lock(im.mu);
  for (;;) {
    if (im.stop_requested()) {
      im.never_started.insert(im.never_started.end(), im.queue.begin(), im.queue.end());
      im.queue.clear();
    }
    while (im.start_next()) {
    }
    if (im.running.empty() && im.finished.empty()) break;
    // Wake up now and then to notice a stop request while children run.
    im.cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return !im.finished.empty(); });
    while (!im.finished.empty()) {
      auto [id, outcome] = std::move(im.finished.front());
      im.finished.pop_front();
      std::thread worker = std::move(im.running.at(id));
      im.running.erase(id);
      --im.running_per_lane[im.lane_of_running[id]];
      im.lane_of_running.erase(id);
      lock.unlock();
      worker.join();
      on_done(id, outcome);
      lock.lock();
    }
  }
}

std::vector<size_t> Pool::not_started() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->never_started;
}

}  // namespace cudadiag::runner

#pragma once
// A small table of plain records under one mutex, for what the interposer keeps about a
// few buffers (those exported over CUDA IPC, those imported, the mappings the program
// made itself): found by a predicate, in insertion order. No C++ library: the preloaded
// interposer has none (realloc'd storage, T trivially copyable).
#include <pthread.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace cudadiag::interposer {

template <class T>
class SmallTable {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  // False when the table cannot grow (out of host memory).
  bool add(const T& v) noexcept {
    pthread_mutex_lock(&lock_);
    bool ok = true;
    if (count_ == capacity_) {
      const std::size_t grown = capacity_ ? capacity_ * 2 : 16;
      void* p = std::realloc(items_, grown * sizeof(T));
      if (p) {
        items_ = static_cast<T*>(p);
        capacity_ = grown;
      } else {
        ok = false;
      }
    }
    if (ok) items_[count_++] = v;
    pthread_mutex_unlock(&lock_);
    return ok;
  }

  // Calls `change` on the first entry `match` accepts, under the lock; false when none did.
  template <class Match, class Change>
  bool change(Match&& match, Change&& change) noexcept {
    pthread_mutex_lock(&lock_);
    bool found = false;
    for (std::size_t i = 0; i < count_ && !found; ++i) {
      if (!match(items_[i])) continue;
      change(items_[i]);
      found = true;
    }
    pthread_mutex_unlock(&lock_);
    return found;
  }

  // A copy of the first entry `match` accepts.
  template <class Match>
  bool find(Match&& match, T& out) noexcept {
    return change(match, [&](T& v) { out = v; });
  }

  // Removes every entry `match` accepts, handing each to `take` (under the lock: `take`
  // must not use this table); how many.
  template <class Match, class Take>
  std::size_t remove(Match&& match, Take&& take) noexcept {
    pthread_mutex_lock(&lock_);
    std::size_t kept = 0, removed = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      if (match(items_[i])) {
        take(items_[i]);
        ++removed;
      } else {
        items_[kept++] = items_[i];
      }
    }
    count_ = kept;
    pthread_mutex_unlock(&lock_);
    return removed;
  }

  // Held across fork(): a child must not inherit the lock taken by another thread.
  void lock_for_fork() noexcept { pthread_mutex_lock(&lock_); }
  void unlock_after_fork() noexcept { pthread_mutex_unlock(&lock_); }

 private:
  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
  T* items_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
};

// The table *Table (a SmallTable with static storage), its lock held across fork() by
// handlers registered on its first use.
template <auto* Table>
auto& held_across_fork() noexcept {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    pthread_atfork([] { Table->lock_for_fork(); }, [] { Table->unlock_after_fork(); },
                   [] { Table->unlock_after_fork(); });
  });
  return *Table;
}

}  // namespace cudadiag::interposer

#pragma once
// The discrete-event core: a priority queue of events keyed by (time, phase, tie, seq). Integer
// seconds only; no policy knowledge. Cancellation is lazy: a cancelled id is skipped on pop.
#include <cassert>
#include <cstdint>
#include <queue>
#include <unordered_set>
#include <utility>
#include <vector>

#include "traces/job_record.hpp"

namespace slurmtwin::sim {

/// Identifies a scheduled event; always valid to hold, cancel or compare.
struct EventId {
  std::uint64_t seq = 0;  // 0 = no event
  bool operator==(const EventId&) const = default;
};

/// Orders events. At equal time, lower phase first; at equal phase, lower tie (e.g. job id) first;
/// then first scheduled first (seq).
struct EventKey {
  Seconds time = 0;
  std::uint8_t phase = 0;
  std::uint64_t tie = 0;
  std::uint64_t seq = 0;
  auto operator<=>(const EventKey&) const =
      default;  // NOLINT(modernize-use-nullptr): clang 14 misreads the defaulted <=>
};

template <class Event>
class EventQueue {
 public:
  /// Schedules `event` at `time` (>= now()). Returns its id for cancel().
  EventId schedule(Seconds time, std::uint8_t phase, std::uint64_t tie, Event event) {
    assert(time >= now_ && "events cannot be scheduled in the past");
    const EventKey key{time, phase, tie, ++seq_};
    heap_.push(Entry{key, std::move(event)});
    return EventId{key.seq};
  }
  /// Cancels a pending event. Only cancel events that have not fired (the controller keeps ids of
  /// pending events only).
  void cancel(EventId id) {
    if (id.seq != 0) cancelled_.insert(id.seq);
  }
  /// True when no live event remains.
  bool empty() {
    skip_cancelled();
    return heap_.empty();
  }
  /// Time of the next live event (queue must not be empty).
  Seconds next_time() {
    skip_cancelled();
    return heap_.top().key.time;
  }
  /// Removes and returns the next live event, advancing now() to its time.
  std::pair<EventKey, Event> pop() {
    skip_cancelled();
    auto entry = std::move(const_cast<Entry&>(heap_.top()));
    heap_.pop();
    now_ = entry.key.time;
    return {entry.key, std::move(entry.event)};
  }
  /// Simulated time of the last popped event (s).
  Seconds now() const { return now_; }
  void set_now(Seconds t) { now_ = t; }

 private:
  struct Entry {
    EventKey key;
    Event event;
    bool operator>(const Entry& o) const { return key > o.key; }
  };
  void skip_cancelled() {
    while (!heap_.empty()) {
      auto it = cancelled_.find(heap_.top().key.seq);
      if (it == cancelled_.end()) return;
      cancelled_.erase(it);
      heap_.pop();
    }
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::unordered_set<std::uint64_t> cancelled_;
  std::uint64_t seq_ = 0;
  Seconds now_ = 0;
};

}  // namespace slurmtwin::sim

#pragma once
// Advanced reservations as Slurm 22.05's job_test_resv applies them (reservation.c; docs/simulator.md,
// "Reservations and outages"). Const configuration over the site's reservations, asked per job:
//  * a job without --reservation keeps off the nodes of every reservation whose time overlaps its run
//    [start, start + time limit) (whatever the flags and access lists; a MAINT reservation holding all
//    of its partition's nodes moves its earliest start to the reservation's end);
//  * a job with --reservation waits (reason Reservation) until a period of it is active, may use only
//    its nodes (FLEX: any node) less those of other reservations overlapping its run (none for MAINT;
//    only MAINT ones for OVERLAP), and is killed at the period's end (TIMEOUT; not FLEX); once every
//    period has ended it is held (never starts).
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

class Reservations {
 public:
  explicit Reservations(const Site& site);
  bool empty() const { return periods_.empty(); }

  /// Whether job `j`'s user and account may use the reservation it asks for (Users=, Accounts=; lists
  /// of the accounting history are empty: admitted).
  bool admits(const sim::SimState& s, const sim::SimJob& j) const;
  /// Whether job `j` may be scheduled at `now`: false for a job whose reservation has no active period
  /// (or that it may not use).
  bool may_run_now(const sim::SimState& s, const sim::SimJob& j, Seconds now) const;

  /// What job_test_resv leaves a run of `j` in `partition` starting at `start` for `time_limit` s
  /// (kUnlimited: a year).
  struct Test {
    Seconds start = 0;          // moved to a MAINT reservation's end when it holds the whole partition
    bool overlap = false;       // a reservation overlapping the run holds nodes of the partition
    std::vector<bool> blocked;  // per node: may not be used (empty when none is)
  };
  Test test(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition, Seconds start,
            Seconds time_limit) const;

  /// The earliest end at or after `t` of any reservation, rounded up to `resolution` (find_resv_end);
  /// 0 when none ends then.
  Seconds next_end(Seconds t, Seconds resolution) const;

 private:
  struct Period {
    Seconds start, end;
    std::vector<std::uint32_t> nodes;  // node indices, ascending
    bool maint, flex, overlap;
    std::uint32_t site_index;  // in Site::reservations
  };
  /// The period of the reservation named like site reservation `index` active at `now`, if any.
  const Period* active(const sim::SimState& s, std::int32_t index, Seconds now) const;
  std::vector<Period> periods_;                              // one per Site::reservations entry, in its order
  std::vector<std::vector<std::uint32_t>> partition_nodes_;  // per partition: node indices, ascending
};

}  // namespace slurmtwin::policies

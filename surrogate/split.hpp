#pragma once
// How a dataset is split into training, validation and test parts (surrogate train and eval).
#include <cstdint>
#include <string>
#include <vector>

#include "surrogate/dataset.hpp"

namespace slurmtwin::surrogate {

/// Which windows and settings each part uses. Splits are by window (time) and by setting, never by row.
struct Split {
  std::vector<std::uint32_t> train_windows, val_windows, test_windows;
  std::vector<std::uint32_t> train_settings, val_settings, test_settings;
};
/// kTail: windows in time order, the first 70% train, the next 15% validation, the last 15% test (at
/// least one each when there are 3 or more): the model must extrapolate forward in time.
/// kInterleaved: of every 7 consecutive windows the 4th validates and the 7th tests (a trace of one
/// week is too short to extrapolate its growing backlog; held-out windows are still unseen jobs).
/// Windows that share target jobs with a held-out window (overlapping windows, --stride-jobs below
/// --window-jobs) are dropped: from validation when they overlap a test window, from training when
/// they overlap either.
/// Settings: setting 0 (the site's own) trains; the rest are shuffled with `seed` and split 70/15/15.
/// A dataset without axes has one setting, in every part.
/// kAll: every window and setting trains and nothing is held out (a model for use, not for scoring:
/// training then runs its fixed step count and keeps the last weights).
enum class SplitMode { kTail, kInterleaved, kAll };
Split make_split(const SurrogateDataset& d, std::uint64_t seed, SplitMode mode = SplitMode::kTail);
SplitMode parse_split_mode(const std::string& name);
/// "tail", "interleaved" or "all".
const char* split_mode_name(SplitMode mode);

}  // namespace slurmtwin::surrogate

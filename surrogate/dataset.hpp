#pragma once
// The surrogate's training data: windows of a trace (setting-independent job tokens), the scheduler
// settings they were replayed under, and each target job's wait in each (window, setting) replay.
// Stored in a checksummed binary file with a schema version (traces/binary_io.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "surrogate/features.hpp"
#include "traces/binary_io.hpp"

namespace slurmtwin::surrogate {

inline constexpr std::uint32_t kDatasetVersion = 1;

/// One swept setting and how it enters the model: value -> [0, 1] on a linear or log1p scale.
struct SettingAxis {
  std::string name;  // e.g. "PriorityWeightAge" (the sweep's setting names)
  double lo = 0, hi = 1;
  bool log = false;
  bool operator==(const SettingAxis&) const = default;
  /// The model's input for `value` (0 at lo, 1 at hi).
  float encode(double value) const;
  /// The value whose encoding is `x` (encode's inverse).
  double decode(float x) const;
};

struct SurrogateDataset {
  std::string trace_fingerprint;  // of the whole trace the windows come from
  std::string site_name;
  bool recorded = false;       // waits are the trace's recorded ones (real-wait mode), not simulated
  bool window_replay = false;  // each window replayed alone, not taken from a whole-trace replay
  FeatureSchema schema;
  std::vector<SettingAxis> axes;              // the settings that vary (may be empty)
  std::vector<std::vector<double>> settings;  // [setting][axis] raw values
  std::vector<WindowTokens> windows;
  /// waits[w][s * windows[w].jobs + i]: wait of job i of window w under setting s, seconds; NaN for
  /// context jobs and jobs that never started.
  std::vector<std::vector<float>> waits;

  std::size_t setting_count() const { return settings.size(); }
  /// Encoded settings of setting s (axes.size() floats).
  std::vector<float> encoded_setting(std::size_t s) const;
};

std::string encode_dataset(const SurrogateDataset& d);
SurrogateDataset decode_dataset(const std::string& bytes, const std::string& file);
void write_dataset(const SurrogateDataset& d, const std::string& path);
SurrogateDataset read_dataset(const std::string& path);

/// Serialisation of the parts a checkpoint shares with a dataset.
void put_schema(ByteWriter& w, const FeatureSchema& s);
FeatureSchema get_schema(ByteReader& r);
void put_axes(ByteWriter& w, const std::vector<SettingAxis>& axes);
std::vector<SettingAxis> get_axes(ByteReader& r);

}  // namespace slurmtwin::surrogate

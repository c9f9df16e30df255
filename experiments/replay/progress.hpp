#pragma once
// Progress of a long command (sweep, replay, dataset generation, training): a redrawn bar with rate
// and ETA on a terminal, plain periodic lines otherwise (logs, CI, job scripts). The clock and the
// stream are injected so that tests can drive it.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>

namespace slurmtwin::experiments {

enum class ProgressStyle {
  kBar,    // one line redrawn in place with '\r' (a terminal)
  kLines,  // a full line every `interval_s` (not a terminal)
  kOff,    // nothing
};

/// kBar when `fd` is a terminal, else kLines.
ProgressStyle progress_style_for(int fd);

/// "12s", "3m05s", "2h01m", "3d04h"; "?" for a negative or non-finite number of seconds.
std::string format_eta(double seconds);

struct ProgressOptions {
  std::string label;           // what is counted, e.g. "sweep" (printed first)
  std::string unit = "items";  // e.g. "points", "jobs" (rate is unit/s)
  std::uint64_t total = 0;     // 0 = unknown (no percentage, no ETA)
  std::uint64_t initial = 0;   // already done before this run (counted in done, not in the rate)
  ProgressStyle style = ProgressStyle::kLines;
  double interval_s = 10;      // kLines: seconds between lines
  double redraw_s = 0.25;      // kBar: least seconds between redraws
  std::size_t bar_width = 30;  // kBar: characters of the bar itself
};

class Progress {
 public:
  /// Seconds on a monotonic clock (steady_clock by default).
  using Clock = std::function<double()>;

  Progress(std::ostream& out, ProgressOptions options, Clock clock = {});
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Sets the count done (including `initial`) and prints when a line or redraw is due. Thread-safe.
  void update(std::uint64_t done);
  /// Adds `n` to the count done. Thread-safe.
  void add(std::uint64_t n = 1);
  /// Prints when a line or redraw is due without changing the count (for a periodic timer).
  void poll();
  /// Prints the final state (and ends the bar's line). Later calls do nothing.
  void finish();

  /// The status text without bar or newline: "sweep: 12/200 points (6.0%), 0.52 points/s, ETA 6m02s".
  std::string status() const;

 private:
  void maybe_print(bool force);  // mutex_ held
  void print_now();              // mutex_ held
  std::string status_locked() const;

  std::ostream& out_;
  ProgressOptions options_;
  Clock clock_;
  double start_s_ = 0;       // clock at construction
  double last_print_s_ = 0;  // clock at the last line or redraw
  bool finished_ = false;
  std::uint64_t done_ = 0;
  std::optional<std::uint64_t> line_done_;  // kLines: the count of the last line printed
  std::size_t last_bar_chars_ = 0;          // length of the last bar drawn (to blank leftovers)
  mutable std::mutex mutex_;
};

}  // namespace slurmtwin::experiments

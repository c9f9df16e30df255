#include "experiments/replay/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>

namespace slurmtwin::experiments {

ProgressStyle progress_style_for(int fd) {
  return isatty(fd) ? ProgressStyle::kBar : ProgressStyle::kLines;
}

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<std::uint64_t>(std::llround(seconds));
  constexpr std::uint64_t kMinute = 60, kHour = 3600, kDay = 86400;
  if (s < kMinute) return fmt::format("{}s", s);
  if (s < kHour) return fmt::format("{}m{:02}s", s / kMinute, s % kMinute);
  if (s < kDay) return fmt::format("{}h{:02}m", s / kHour, (s % kHour) / kMinute);
  return fmt::format("{}d{:02}h", s / kDay, (s % kDay) / kHour);
}

Progress::Progress(std::ostream& out, ProgressOptions options, Clock clock)
    : out_(out), options_(std::move(options)), clock_(std::move(clock)) {
  if (!clock_) {
    clock_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
  start_s_ = clock_();
  last_print_s_ = start_s_;
  done_ = options_.initial;
}

void Progress::update(std::uint64_t done) {
  std::lock_guard lock(mutex_);
  done_ = done;
  maybe_print(/*force=*/false);
}

void Progress::add(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  done_ += n;
  maybe_print(/*force=*/false);
}

void Progress::poll() {
  std::lock_guard lock(mutex_);
  maybe_print(/*force=*/false);
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  // A line already says this count (the last update printed it): the final line would repeat it.
  if (options_.style != ProgressStyle::kLines || line_done_ != done_) maybe_print(/*force=*/true);
  if (options_.style == ProgressStyle::kBar) out_ << "\n" << std::flush;
  finished_ = true;
}

std::string Progress::status() const {
  std::lock_guard lock(mutex_);
  return status_locked();
}

std::string Progress::status_locked() const {
  const double elapsed = clock_() - start_s_;
  const auto counted = done_ >= options_.initial ? done_ - options_.initial : 0;
  const double rate = elapsed > 0 ? static_cast<double>(counted) / elapsed : 0;
  std::string out = options_.label.empty() ? "" : options_.label + ": ";
  if (options_.total > 0) {
    out += fmt::format("{}/{} {} ({:.1f}%)", done_, options_.total, options_.unit,
                       100.0 * static_cast<double>(done_) / static_cast<double>(options_.total));
  } else {
    out += fmt::format("{} {}", done_, options_.unit);
  }
  out += fmt::format(", {:.3g} {}/s", rate, options_.unit);
  if (options_.total > 0) {
    const auto left = options_.total > done_ ? options_.total - done_ : 0;
    if (left == 0)
      out += fmt::format(", done in {}", format_eta(elapsed));
    else
      out += fmt::format(", ETA {}", rate > 0 ? format_eta(static_cast<double>(left) / rate) : "?");
  }
  return out;
}

void Progress::maybe_print(bool force) {
  if (finished_ || options_.style == ProgressStyle::kOff) return;
  const double now = clock_();
  const double gap = options_.style == ProgressStyle::kBar ? options_.redraw_s : options_.interval_s;
  if (!force && now - last_print_s_ < gap) return;
  last_print_s_ = now;
  print_now();
}

void Progress::print_now() {
  if (options_.style == ProgressStyle::kLines) {
    out_ << status_locked() << "\n" << std::flush;
    line_done_ = done_;
    return;
  }
  const std::size_t width = options_.bar_width;
  std::size_t filled = 0;
  if (options_.total > 0)
    filled =
        std::min(width, static_cast<std::size_t>(static_cast<double>(width) * static_cast<double>(done_) /
                                                 static_cast<double>(options_.total)));
  std::string line =
      "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + status_locked();
  const std::size_t length = line.size();
  if (length < last_bar_chars_) line += std::string(last_bar_chars_ - length, ' ');  // blank leftovers
  last_bar_chars_ = length;
  out_ << "\r" << line << std::flush;
}

}  // namespace slurmtwin::experiments

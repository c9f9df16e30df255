// The progress reporter of long commands: plain periodic lines off a terminal, a redrawn bar on one,
// rate and ETA, driven here by an injected clock and a string stream.
#include <doctest/doctest.h>

#include <sstream>

#include "experiments/replay/progress.hpp"

namespace slurmtwin::experiments {

TEST_CASE("format_eta: seconds, minutes, hours, days") {
  CHECK(format_eta(0) == "0s");
  CHECK(format_eta(59.4) == "59s");
  CHECK(format_eta(62) == "1m02s");
  CHECK(format_eta(3 * 3600 + 65) == "3h01m");
  CHECK(format_eta(2 * 86400 + 5 * 3600 + 59) == "2d05h");
  CHECK(format_eta(-1) == "?");
}

TEST_CASE("progress lines: one per interval, rate from this run only, ETA, a final line") {
  double now = 100;  // s, the injected clock
  std::ostringstream out;
  ProgressOptions o;
  o.label = "sweep";
  o.unit = "points";
  o.total = 100;
  o.initial = 20;  // from an earlier run: counted as done, not in the rate
  o.style = ProgressStyle::kLines;
  o.interval_s = 10;
  Progress p(out, o, [&] { return now; });
  now = 105;
  p.add(5);  // 5 s in: no line yet
  CHECK(out.str().empty());
  now = 110;
  p.add(5);  // 10 s in, 10 points this run: 1 point/s, 70 left -> ETA 70 s
  CHECK(out.str() == "sweep: 30/100 points (30.0%), 1 points/s, ETA 1m10s\n");
  now = 115;
  p.poll();  // not due
  CHECK(out.str() == "sweep: 30/100 points (30.0%), 1 points/s, ETA 1m10s\n");
  now = 120;
  p.update(60);  // 40 points in 20 s: 2 points/s, 40 left -> 20 s
  CHECK(out.str().ends_with("sweep: 60/100 points (60.0%), 2 points/s, ETA 20s\n"));
  now = 150;
  p.update(100);  // a line is due: it is the final one, and finish() does not repeat it
  p.finish();
  CHECK(
      out.str().ends_with("sweep: 60/100 points (60.0%), 2 points/s, ETA 20s\n"
                          "sweep: 100/100 points (100.0%), 1.6 points/s, done in 50s\n"));
  const auto size = out.str().size();
  p.finish();  // once only
  p.add();
  CHECK(out.str().size() == size);
}

TEST_CASE("progress lines: finish prints the final count once, whether or not an update already did") {
  double now = 0;
  std::ostringstream out;
  ProgressOptions o;
  o.label = "dataset";
  o.unit = "replays";
  o.total = 4;
  o.interval_s = 10;
  Progress p(out, o, [&] { return now; });
  now = 3;
  p.update(4);  // no line due: finish prints it
  p.finish();
  CHECK(out.str() == "dataset: 4/4 replays (100.0%), 1.33 replays/s, done in 3s\n");
}

TEST_CASE(
    "progress bar: redrawn in place after a carriage return, blanks leftovers, ends its line on finish") {
  double now = 0;
  std::ostringstream out;
  ProgressOptions o;
  o.label = "replay";
  o.unit = "jobs";
  o.total = 10;
  o.style = ProgressStyle::kBar;
  o.redraw_s = 1;
  o.bar_width = 10;
  Progress p(out, o, [&] { return now; });
  now = 0.5;
  p.add(3);  // within redraw_s of the start: nothing
  CHECK(out.str().empty());
  now = 2;
  p.add(2);  // 5/10 in 2 s: 2.5 jobs/s, 5 left -> 2 s
  CHECK(out.str() == "\r[#####.....] replay: 5/10 jobs (50.0%), 2.5 jobs/s, ETA 2s");
  now = 4;
  p.update(10);
  p.finish();
  CHECK(out.str().ends_with("\r[##########] replay: 10/10 jobs (100.0%), 2.5 jobs/s, done in 4s\n"));
}

TEST_CASE("progress without a total counts and gives a rate, no ETA, kOff prints nothing") {
  double now = 0;
  std::ostringstream out;
  ProgressOptions o;
  o.label = "generate";
  o.unit = "jobs";
  o.interval_s = 1;
  Progress p(out, o, [&] { return now; });
  now = 2;
  p.add(1000);
  CHECK(out.str() == "generate: 1000 jobs, 500 jobs/s\n");
  std::ostringstream none;
  o.style = ProgressStyle::kOff;
  Progress off(none, o, [&] { return now; });
  now = 10;
  off.add(5);
  off.finish();
  CHECK(none.str().empty());
}

}  // namespace slurmtwin::experiments

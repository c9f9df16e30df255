#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "traces/hostlist.hpp"
#include "traces/node_order.hpp"
#include "traces/site.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"
#include "traces/trace_summary.hpp"

using namespace slurmtwin;

TEST_CASE("Slurm durations parse in every sacct/slurm.conf form") {
  CHECK(parse_slurm_duration("5") == 5 * 60);                   // MM
  CHECK(parse_slurm_duration("5:30") == 5 * 60 + 30);           // MM:SS
  CHECK(parse_slurm_duration("01:02:03") == 3723);              // HH:MM:SS
  CHECK(parse_slurm_duration("2-03") == 2 * 86400 + 3 * 3600);  // D-HH
  CHECK(parse_slurm_duration("2-03:04") == 2 * 86400 + 3 * 3600 + 4 * 60);
  CHECK(parse_slurm_duration("3-00:00:00") == 3 * 86400);
  CHECK(parse_slurm_duration("00:00.006") == 0);  // sacct CPU-time form
  CHECK(parse_slurm_duration("UNLIMITED") == kUnlimited);
  CHECK(parse_slurm_duration("infinite") == kUnlimited);
  CHECK(parse_slurm_duration("Partition_Limit") == kUnsetTime);
  CHECK_FALSE(parse_slurm_duration("").has_value());
  CHECK_FALSE(parse_slurm_duration("1:2:3:4").has_value());
  CHECK_FALSE(parse_slurm_duration("abc").has_value());
  CHECK_FALSE(parse_slurm_duration("-5").has_value());
  CHECK(format_slurm_duration(3 * 86400) == "3-00:00:00");
  CHECK(format_slurm_duration(3723) == "01:02:03");
}

TEST_CASE("timestamps round-trip through sacct's ISO form as UTC") {
  CHECK(parse_timestamp("1970-01-01T00:00:00") == 0);
  CHECK(parse_timestamp("2021-10-05T11:26:12") == 1633433172);  // date -u -d 2021-10-05T11:26:12 +%s
  CHECK(parse_timestamp("2021-10-05 11:26:12") == 1633433172);
  CHECK(parse_timestamp("Unknown") == kUnsetTime);
  CHECK(parse_timestamp("None") == kUnsetTime);
  CHECK_FALSE(parse_timestamp("2021-13-05T11:26:12").has_value());
  CHECK_FALSE(parse_timestamp("yesterday").has_value());
  CHECK(format_timestamp(1633433172) == "2021-10-05T11:26:12");
  CHECK(format_timestamp(kUnsetTime) == "Unknown");
}

TEST_CASE("memory sizes convert to MB with binary units") {
  CHECK(text::parse_memory_mb("500G") == 512000);
  CHECK(text::parse_memory_mb("187000M") == 187000);
  CHECK(text::parse_memory_mb("4000") == 4000);
  CHECK(text::parse_memory_mb("320K") == 1);  // rounds up
  CHECK(text::parse_memory_mb("1T") == 1048576);
  CHECK_FALSE(text::parse_memory_mb("12Q").has_value());
  CHECK_FALSE(text::parse_memory_mb("-1G").has_value());
}

TEST_CASE("hostlists expand with padding, lists and cross products, and compress back") {
  const auto n = expand_hostlist("n[001-003,7],gn1");
  REQUIRE(n.size() == 5);
  CHECK(n[0] == "n001");
  CHECK(n[2] == "n003");
  CHECK(n[3] == "n7");
  CHECK(n[4] == "gn1");
  CHECK(expand_hostlist("n[001-087]").size() == 87);
  CHECK(expand_hostlist("r[1-2]n[1-3]").size() == 6);
  CHECK(expand_hostlist("cpn-q06-04-[01-02],cpn-u23-[17,25]") ==
        std::vector<std::string>{"cpn-q06-04-01", "cpn-q06-04-02", "cpn-u23-17", "cpn-u23-25"});
  CHECK_THROWS_AS(expand_hostlist("n[1-"), std::invalid_argument);
  CHECK_THROWS_AS(expand_hostlist("n[5-1]"), std::invalid_argument);
  CHECK_THROWS_AS(expand_hostlist("n[1-100000000]", 1000), std::invalid_argument);
  CHECK(compress_hostlist(expand_hostlist("n[001-087],gn[001-002]")) == "n[001-087],gn[001-002]");
  CHECK(compress_hostlist({"a1", "a2", "a4", "b"}) == "a[1-2,4],b");
}

TEST_CASE("TRES strings parse counts and per-MB weights") {
  const auto t = parse_tres_counts("billing=4,cpu=20,gres/gpu=4,mem=193024M,node=1");
  CHECK(t.at("cpu") == 20);
  CHECK(t.at("gres/gpu") == 4);
  CHECK(t.at("mem") == 193024);
  CHECK(parse_tres_counts("mem=2G").at("mem") == 2048);
  const auto w = parse_tres_weights("CPU=0,Mem=.03,GRES/gpu=30000");
  CHECK(w.at("cpu") == 0.0);
  CHECK(w.at("mem") == doctest::Approx(0.03));
  CHECK(w.at("gres/gpu") == 30000.0);
  CHECK(parse_tres_weights("Mem=0.25G").at("mem") == doctest::Approx(0.25 / 1024));
  CHECK_THROWS_AS(parse_tres_counts("cpu"), std::invalid_argument);
  CHECK_THROWS_AS(parse_tres_weights("cpu=x"), std::invalid_argument);
}

TEST_CASE("quantiles by selection equal the sorted interpolation, ties and one value included") {
  // By hand: 1..5 (shuffled) -> p50 at position 2 = 3; p90 at 3.6 = 4 + 0.6 = 4.6; p95 at 3.8 = 4.8;
  // p99 at 3.96 = 4.96.
  std::vector<double> five{4, 1, 5, 3, 2};
  const auto q = quantiles(five);
  CHECK(q.p50 == 3);
  CHECK(q.p90 == doctest::Approx(4.6));
  CHECK(q.p95 == doctest::Approx(4.8));
  CHECK(q.p99 == doctest::Approx(4.96));
  std::vector<double> one{7};
  CHECK(quantiles(one).p99 == 7);
  std::vector<double> none;
  CHECK(quantiles(none).p50 == 0);
  // Against the sort: the same order statistics and the same arithmetic, so the same bits.
  std::mt19937_64 rng(5);
  for (std::size_t n : {2, 3, 10, 99, 100, 101, 1000}) {
    CAPTURE(n);
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>(std::uniform_int_distribution<int>(0, 30)(rng));  // ties
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double p) {
      const double pos = p * static_cast<double>(n - 1);
      const auto lo = static_cast<std::size_t>(std::floor(pos));
      const auto hi = std::min(lo + 1, n - 1);
      return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
    };
    const auto got = quantiles(v);
    CHECK(got.p50 == at(0.5));
    CHECK(got.p90 == at(0.9));
    CHECK(got.p95 == at(0.95));
    CHECK(got.p99 == at(0.99));
    const auto d = distribution(sorted);
    CHECK(d.p90 == at(0.9));
    CHECK(d.mean ==
          doctest::Approx(std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n)));
  }
}

TEST_CASE("node names compare as Slurm's strnatcmp orders slurmctld's node table") {
  // Each pair worked out by hand from strnatcmp's rules (src/common/strnatcmp.c): digit runs compare as
  // numbers unless one starts with '0' (then digit by digit, a shorter run first), blanks are skipped,
  // everything else by character code.
  const auto before = [](std::string_view a, std::string_view b) {
    return natural_compare(a, b) < 0 && natural_compare(b, a) > 0;
  };
  CHECK(before("n9", "n10"));        // 9 < 10: the longer run is the larger number
  CHECK(before("node2", "node10"));  // not "node10" < "node2" as strcmp has it
  CHECK(before("n19", "n21"));       // equal length: the first differing digit
  CHECK(before("n01", "n1"));        // a leading zero: '0' < '1' digit by digit
  CHECK(before("n010", "n09"));      // ... so 010 sorts before 09
  CHECK(before("n001", "n0010"));    // ... and a run that ends first is the smaller
  CHECK(before("b1", "g1"));         // the micro cluster's nodes: b1 g1 m1 n1, whatever slurm.conf lists
  CHECK(before("g1", "m1"));
  CHECK(before("g001", "gn001"));  // '0' (48) < 'n' (110)
  CHECK(before("g001", "gpu1"));
  CHECK(before("N1", "n1"));       // case matters: 'N' < 'n'
  CHECK(before("n1", "n1a"));      // a prefix first
  CHECK(before("r1n10", "r2n1"));  // the first run decides
  CHECK(before("r1n2", "r1n10"));  // then the next
  CHECK(natural_compare("n1", "n1") == 0);
  CHECK(natural_compare("n 1", "n1") == 0);  // blanks are skipped
  CHECK(natural_compare("", "") == 0);
  CHECK(before("", "a"));
}

// libFuzzer target: sweep spec parser, plus the design it expands to when that is small enough to
// expand per input (the parser allows designs of up to 10^7 points, which would make one input take
// seconds and gigabytes).
#include "experiments/sweep/sweep_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

/// Points the design will have before de-duplication (saturating at `cap` + 1).
std::size_t design_size(const slurmtwin::experiments::SweepSpec& spec, std::size_t cap) {
  using slurmtwin::experiments::SweepDesign;
  if (spec.design != SweepDesign::kGrid) return spec.points;
  std::size_t n = 1;
  for (const auto& p : spec.parameters) {
    const std::size_t levels = !p.values.empty() ? p.values.size() : p.count > 0 ? p.count : 1;
    if (levels > (cap + 1) / n) return cap + 1;
    n *= levels;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  constexpr std::size_t kMaxExpanded = 10'000;  // points expanded per input
  try {
    const auto spec = experiments::parse_sweep_spec(std::string(fuzz::as_text(data, size)), fuzz::kFuzzFile);
    if (design_size(spec, kMaxExpanded) <= kMaxExpanded) {
      const auto points = experiments::design_points(spec);
      if (points.empty()) fuzz::fail("a parsed spec has no design points");
    }
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  return 0;
}

// libFuzzer target: reservations (`scontrol show reservation`, `sacctmgr -P show reservation`) and node
// events (`sacctmgr -P show event`) readers; what they read is then validated against the default site.
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/default_site.hpp"
#include "traces/site_events.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const Site kBase = default_site();
  static const TimeZone kUtc("UTC");
  const auto text = fuzz::as_text(data, size);
  Site site = kBase;
  std::vector<std::string> warnings;
  try {
    site.reservations = read_reservations(text, fuzz::kFuzzFile, kUtc, warnings);
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  try {
    site.outages = read_node_events(text, fuzz::kFuzzFile, kUtc);
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  try {
    validate_site_events(site);  // names it does not know are refused, by contract, this way
  } catch (const std::invalid_argument&) {
  }
  return 0;
}

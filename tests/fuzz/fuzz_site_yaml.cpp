// libFuzzer target: site YAML loader (parse + validate). A site that loads must write back to YAML that
// loads to the same site (the round trip site_yaml.hpp promises).
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/site_yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  Site site;
  try {
    site = parse_site_yaml(fuzz::as_text(data, size), fuzz::kFuzzFile);
  } catch (const InputError& e) {
    fuzz::check_error(e);
    return 0;
  }
  const auto yaml = site_to_yaml(site);
  try {
    if (site_to_yaml(parse_site_yaml(yaml, "round-trip")) != yaml)
      fuzz::fail("site YAML round trip changed the site");
  } catch (const InputError& e) {
    fuzz::fail(std::string("a loaded site does not load again after writing: ") + e.what());
  }
  return 0;
}

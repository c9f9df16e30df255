// libFuzzer target: gres.conf applied to the built-in default site (8 GPU nodes among 76).
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/default_site.hpp"
#include "traces/slurm_conf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const Site kBase = default_site();
  Site site = kBase;
  std::vector<std::string> warnings;
  try {
    apply_gres_conf(fuzz::as_text(data, size), fuzz::kFuzzFile, site, warnings);
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  return 0;
}

// libFuzzer target: `sacctmgr -P show associations` dump importer, on the default site.
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/default_site.hpp"
#include "traces/sacctmgr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const Site kBase = default_site();
  Site site = kBase;
  std::vector<std::string> warnings;
  try {
    import_assoc_dump_text(fuzz::as_text(data, size), fuzz::kFuzzFile, site, warnings);
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  return 0;
}

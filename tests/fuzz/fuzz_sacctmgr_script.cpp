// libFuzzer target: sacctmgr script importer, on a fresh database and on the default site's accounts.
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/default_site.hpp"
#include "traces/sacctmgr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const Site kBase = default_site();
  for (const bool fresh : {true, false}) {
    Site site = fresh ? Site{} : kBase;
    std::vector<std::string> warnings;
    try {
      import_sacctmgr_script_text(fuzz::as_text(data, size), fuzz::kFuzzFile, site, warnings);
    } catch (const InputError& e) {
      fuzz::check_error(e);
    }
  }
  return 0;
}

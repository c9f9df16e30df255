// libFuzzer target: slurm.conf importer (nodes, partitions, scheduling settings). The input is named as
// a file in a directory that does not exist, so a relative Include fails with an InputError instead
// of reading whatever lies beside the fuzzer.
#include <stdexcept>

#include "tests/fuzz/fuzz_support.hpp"
#include "traces/slurm_conf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const std::string kFile = "/nonexistent-slurmtwin-fuzz/slurm.conf";
  std::vector<std::string> warnings;
  try {
    const Site site = import_slurm_conf_text(fuzz::as_text(data, size), kFile, warnings);
    try {
      validate(site);  // documented to throw std::invalid_argument naming the bad part
    } catch (const std::invalid_argument& e) {
      if (std::string_view(e.what()).empty()) fuzz::fail("validate() error without a message");
    }
  } catch (const InputError& e) {
    // Errors inside an Include'd file name that file.
    if (std::string_view(e.what()).empty()) fuzz::fail("InputError without a message");
  }
  return 0;
}

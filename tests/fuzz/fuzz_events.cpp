// libFuzzer target: Slurm-simulator events reader, with a user -> default account map as users.sim
// gives it.
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const std::map<std::string, std::string> kDefaults = {{"user1", "account1"}, {"user2", "account2"}};
  fuzz::fuzz_trace_reader(fuzz::as_text(data, size),
                          [](std::string_view content, Trace& trace, RejectSink& sink) {
                            read_events(content, fuzz::kFuzzFile, trace, sink, kDefaults);
                          });
  return 0;
}

// libFuzzer target: NREL Eagle CSV reader.
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  fuzz::fuzz_trace_reader(fuzz::as_text(data, size),
                          [](std::string_view content, Trace& trace, RejectSink& sink) {
                            read_eagle_csv(content, fuzz::kFuzzFile, trace, sink);
                          });
  return 0;
}

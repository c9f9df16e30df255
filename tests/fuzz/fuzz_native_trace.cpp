// libFuzzer target: the native binary trace format (.stt). An input that starts with the magic is
// decoded as it is (envelope, version, size and checksum checks); any other input is taken as a
// payload and wrapped in a valid header and checksum, so the fuzzer reaches the payload decoder
// (random bytes almost never pass the FNV-1a checksum). The only acceptable failure is an InputError;
// decoded jobs must be within the record limits.
#include <cstring>

#include "tests/fuzz/fuzz_support.hpp"
#include "traces/native_format.hpp"

namespace {

std::string with_valid_envelope(std::string_view payload) {
  std::string out = "STWTRACE";
  const auto put = [&out](auto v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(slurmtwin::kNativeTraceVersion);
  put(static_cast<std::uint64_t>(payload.size()));
  out += payload;
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64, as native_format.cpp
  for (const char c : payload) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  put(h);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  const auto text = fuzz::as_text(data, size);
  const std::string bytes = text.starts_with("STWTRACE") ? std::string(text) : with_valid_envelope(text);
  try {
    const Trace trace = decode_native_trace(bytes, fuzz::kFuzzFile);
    for (const auto& job : trace.jobs)
      if (const auto problem = record_limit_problem(job))
        fuzz::fail("decoded job " + std::to_string(job.job_id) + " has " + problem->field + ": " +
                   problem->detail);
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  return 0;
}

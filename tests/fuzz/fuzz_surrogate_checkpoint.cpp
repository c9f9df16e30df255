// libFuzzer target: the surrogate checkpoint (STWSURCK v1, Surrogate::decode in surrogate/model.hpp).
// An input that starts with the magic is decoded as it is, so the envelope, size and checksum checks
// must reject it cleanly; any other input is taken as a payload and sealed in a valid container, so
// the fuzzer reaches the payload parser behind the checksum: model dimensions, feature schema, axes,
// normalisation statistics and the weights (name, shape and values of each tensor). The only
// acceptable failure is an InputError naming the input. A checkpoint that loads must predict, with
// the right shape, for a small window.
#include "surrogate/model.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

constexpr char kMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'C', 'K'};  // as surrogate/model.cpp

// Two jobs with every feature at 0 and the first bucket of each category: in range for any schema.
void check_predicts(const slurmtwin::surrogate::Surrogate& model) {
  using namespace slurmtwin;
  surrogate::WindowTokens w;
  w.jobs = 2;
  w.numeric.assign(2 * model.schema().numeric.size(), 0.0f);
  w.user = w.account = w.partition = w.qos = {0, 0};
  w.target = {1, 1};
  w.job_index = {0, 1};
  const std::vector<std::vector<float>> settings(2, std::vector<float>(model.axes().size(), 0.5f));
  const auto q = model.predict(w, settings);
  if (q.size() != 2 || q[0].size() != 2 || q[1].size() != 2) fuzz::fail("prediction of the wrong shape");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const bool quiet = [] {
    surrogate::Surrogate::set_threads(1);  // one input at a time; libtorch's pool would only add noise
    return true;
  }();
  (void)quiet;
  const auto text = fuzz::as_text(data, size);
  const std::string bytes = has_magic(text, kMagic)
                                ? std::string(text)
                                : seal_container(kMagic, surrogate::kCheckpointVersion, std::string(text));
  try {
    check_predicts(surrogate::Surrogate::decode(bytes, fuzz::kFuzzFile));
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  return 0;
}

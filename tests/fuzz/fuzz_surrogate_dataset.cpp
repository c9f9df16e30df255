// libFuzzer target: the surrogate dataset file (STWSURDS v1, surrogate/dataset.hpp). An input that
// starts with the magic is decoded as it is, so the envelope, size and checksum checks must reject
// it cleanly; any other input is taken as a payload and sealed in a valid container, so the fuzzer
// reaches the payload decoder behind the checksum. The only acceptable failure is an InputError
// naming the input. A dataset that decodes must encode back to bytes that decode to the same
// encoding, and must split into windows and settings without touching anything out of range.
#include "surrogate/dataset.hpp"
#include "surrogate/split.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

constexpr char kMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'D', 'S'};  // as surrogate/dataset.cpp

void check_dataset(const slurmtwin::surrogate::SurrogateDataset& d) {
  using namespace slurmtwin;
  const std::string again = surrogate::encode_dataset(d);
  if (surrogate::encode_dataset(surrogate::decode_dataset(again, fuzz::kFuzzFile)) != again)
    fuzz::fail("a decoded dataset does not survive encode -> decode -> encode");
  for (const auto mode : {surrogate::SplitMode::kTail, surrogate::SplitMode::kInterleaved}) {
    const auto split = surrogate::make_split(d, 7, mode);
    for (const auto* part : {&split.train_windows, &split.val_windows, &split.test_windows})
      for (const auto w : *part)
        if (w >= d.windows.size()) fuzz::fail("split names a window past the end");
    for (const auto* part : {&split.train_settings, &split.val_settings, &split.test_settings})
      for (const auto s : *part)
        if (s >= d.setting_count()) fuzz::fail("split names a setting past the end");
  }
  for (std::size_t s = 0; s < d.setting_count(); ++s)
    if (d.encoded_setting(s).size() != d.axes.size()) fuzz::fail("encoded setting of the wrong width");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  const auto text = fuzz::as_text(data, size);
  const std::string bytes = has_magic(text, kMagic)
                                ? std::string(text)
                                : seal_container(kMagic, surrogate::kDatasetVersion, std::string(text));
  try {
    check_dataset(surrogate::decode_dataset(bytes, fuzz::kFuzzFile));
  } catch (const InputError& e) {
    fuzz::check_error(e);
  }
  return 0;
}

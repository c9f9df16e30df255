#include "experiments/sweep/sweep_sobol.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <stdexcept>

#include "traces/rng.hpp"

namespace slurmtwin::experiments {
namespace {

/// One line of new-joe-kuo-6.21201: degree s of the primitive polynomial, its coefficients a (the
/// inner bits), and the initial direction numbers m_1..m_s.
struct JoeKuo {
  unsigned s;
  unsigned a;
  std::array<std::uint32_t, 7> m;
};

// Dimensions 2..31 of new-joe-kuo-6.21201, copied from the published file (d s a m_i).
constexpr std::array<JoeKuo, kSobolMaxDimensions - 1> kJoeKuo = {{
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
    {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},
    {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},
    {7, 8, {1, 3, 5, 9, 1, 25, 53}},
    {7, 14, {1, 3, 1, 13, 9, 35, 107}},
    {7, 19, {1, 3, 1, 5, 27, 61, 31}},
    {7, 21, {1, 1, 5, 11, 19, 41, 61}},
    {7, 28, {1, 3, 5, 3, 3, 13, 69}},
    {7, 31, {1, 1, 7, 13, 1, 19, 1}},
    {7, 32, {1, 3, 7, 5, 13, 19, 59}},
    {7, 37, {1, 1, 3, 9, 25, 29, 41}},
    {7, 41, {1, 3, 5, 13, 23, 1, 55}},
}};

}  // namespace

SobolSequence::SobolSequence(std::size_t dimensions, std::uint64_t shift_seed) {
  if (dimensions == 0 || dimensions > kSobolMaxDimensions)
    throw std::invalid_argument(
        fmt::format("Sobol design: {} dimensions; the built-in direction numbers cover 1..{}", dimensions,
                    kSobolMaxDimensions));
  directions_.assign(dimensions, std::vector<std::uint32_t>(kBits, 0));
  // V[i] (1-based bit i) = m_i / 2^i, scaled by 2^32.
  for (unsigned i = 1; i <= kBits; ++i) directions_[0][i - 1] = std::uint32_t{1} << (kBits - i);
  for (std::size_t d = 1; d < dimensions; ++d) {
    const auto& jk = kJoeKuo[d - 1];
    auto& v = directions_[d];
    for (unsigned i = 1; i <= kBits; ++i) {
      if (i <= jk.s) {
        v[i - 1] = jk.m[i - 1] << (kBits - i);
        continue;
      }
      // The recurrence of the primitive polynomial: V_i = V_{i-s} ^ (V_{i-s} >> s) ^ sum a_k V_{i-k}.
      std::uint32_t x = v[i - jk.s - 1] ^ (v[i - jk.s - 1] >> jk.s);
      for (unsigned k = 1; k + 1 <= jk.s; ++k)
        if ((jk.a >> (jk.s - 1 - k)) & 1u) x ^= v[i - k - 1];
      v[i - 1] = x;
    }
  }
  state_.assign(dimensions, 0);
  shift_.assign(dimensions, 0);
  if (shift_seed != 0) {
    Rng rng(shift_seed);
    for (auto& s : shift_) s = static_cast<std::uint32_t>(rng.next() >> 32);
  }
}

std::vector<double> SobolSequence::next() {
  constexpr double kScale = 0x1.0p-32;  // 2^-32: state is a 32-bit binary fraction
  std::vector<double> out(state_.size());
  for (std::size_t d = 0; d < state_.size(); ++d)
    out[d] = static_cast<double>(state_[d] ^ shift_[d]) * kScale;
  // Gray-code step: flip the direction number of the lowest zero bit of the index.
  const auto c = static_cast<unsigned>(std::countr_one(index_));
  if (c >= kBits) throw std::out_of_range("Sobol design: more than 2^32 points");
  for (std::size_t d = 0; d < state_.size(); ++d) state_[d] ^= directions_[d][c];
  ++index_;
  return out;
}

}  // namespace slurmtwin::experiments

#pragma once
// Sobol low-discrepancy sequence (Bratley & Fox's Gray-code construction) with the direction numbers
// of Joe & Kuo's new-joe-kuo-6.21201 set (https://web.maths.unsw.edu.au/~fkuo/sobol/), for the first
// kSobolMaxDimensions dimensions, and an optional random digital shift (scrambling) per seed.
#include <cstdint>
#include <vector>

namespace slurmtwin::experiments {

/// Dimensions the built-in direction numbers cover (dimension 1 is van der Corput's).
inline constexpr std::size_t kSobolMaxDimensions = 31;

class SobolSequence {
 public:
  /// `dimensions` in 1..kSobolMaxDimensions (else std::invalid_argument). `shift_seed` != 0 XORs every
  /// coordinate with a per-dimension random 32-bit mask drawn from traces/rng.hpp (a digital shift:
  /// keeps the net properties, removes the points on 0); 0 = the plain sequence.
  explicit SobolSequence(std::size_t dimensions, std::uint64_t shift_seed = 0);

  /// The next point in [0, 1)^dimensions. The plain sequence starts at the origin, as Joe & Kuo's
  /// reference program and scipy.stats.qmc.Sobol(scramble=False) do: 0, 1/2, 3/4, 1/4, 3/8, ...
  std::vector<double> next();

 private:
  static constexpr unsigned kBits = 32;                 // bits of each coordinate
  std::vector<std::vector<std::uint32_t>> directions_;  // [dimension][bit] direction numbers V, << 32-bit
  std::vector<std::uint32_t> state_;                    // current point, scaled by 2^32
  std::vector<std::uint32_t> shift_;                    // digital shift per dimension
  std::uint64_t index_ = 0;                             // index of the next point
};

}  // namespace slurmtwin::experiments

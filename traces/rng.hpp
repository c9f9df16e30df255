#pragma once
// A small, fully specified random number generator (xoshiro256** seeded by SplitMix64) and the few
// distributions we need, written out so that the same seed gives the same numbers on every platform
// and standard library (std:: distributions are implementation-defined).
#include <cmath>
#include <cstdint>
#include <numbers>

namespace slurmtwin {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  /// Uniform 64 random bits.
  std::uint64_t next() {
    const auto result = rotl(s_[1] * 5, 7) * 9;
    const auto t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n) (n > 0), without modulo bias worth noting for n << 2^64.
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>(uniform() * static_cast<double>(n));
  }
  /// Standard normal by Box-Muller (one value per call; the twin is discarded for simplicity).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  double exponential(double rate) { return -std::log(1.0 - uniform()) / rate; }
  double lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace slurmtwin

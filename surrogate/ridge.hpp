#pragma once
// The tabular baseline the transformer must beat: ridge regression of log1p(wait s) on each job's
// engineered features (surrogate/features.hpp: resources, limits, recent load of its user and
// account, queue ahead of it in its window), its partition and QOS, the encoded setting, and every
// setting × feature product (so the weights can change how each feature matters). Solved in closed
// form with Eigen; the penalty is chosen on the validation windows.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "surrogate/dataset.hpp"
#include "traces/binary_io.hpp"

namespace slurmtwin::surrogate {

class RidgeBaseline {
 public:
  /// Fits on train windows × train settings (at most `max_rows` rows, sampled evenly), picking the
  /// penalty from {1e-3 … 1e3} by mean squared error on val windows × val settings.
  static RidgeBaseline fit(const SurrogateDataset& d, const std::vector<std::uint32_t>& train_windows,
                           const std::vector<std::uint32_t>& train_settings,
                           const std::vector<std::uint32_t>& val_windows,
                           const std::vector<std::uint32_t>& val_settings, std::size_t max_rows = 400000);
  /// Predicted 10/50/90% quantiles of log1p(wait s) of every job of window `w` under setting `s`
  /// (median = the regression; the interval from the training residuals' 10/90% quantiles).
  std::vector<std::array<float, 3>> predict(const SurrogateDataset& d, std::uint32_t w,
                                            std::uint32_t s) const;
  /// The fitted regression term by term, in log1p(wait s): intercept + Σ_k numeric[k]·z_k +
  /// partition[p] + qos[q] + Σ_a setting[a]·s_a + Σ_a Σ_k cross[a][k]·s_a·z_k, where z_k = (v_k − mean[k])
  /// / stdev[k] is numeric feature k standardised and s_a the encoded setting (what a model that adds to
  /// the ridge starts from, ModelConfig::ridge_base).
  struct Terms {
    double intercept = 0;
    std::vector<double> mean, stdev, numeric, partition, qos, setting;
    std::vector<std::vector<double>> cross;  // [axis][feature]
  };
  Terms terms(const SurrogateDataset& d) const;
  double lambda() const { return lambda_; }
  std::size_t columns() const { return coef_.size(); }
  /// The regressors a dataset of `schema` and `axes` count axes gives (what a fitted model has).
  static std::size_t columns_for(const FeatureSchema& schema, std::size_t axes);

  /// Writes the fitted model (statistics, coefficients, penalty, residual quantiles).
  void put(ByteWriter& w) const;
  /// Reads what put() wrote; `bad` builds the error for a value out of place (it is thrown).
  template <class Bad>
  static RidgeBaseline get(ByteReader& r, std::size_t features, std::size_t columns, const Bad& bad) {
    RidgeBaseline m;
    m.mean_ = r.get_vector<double>();
    m.stdev_ = r.get_vector<double>();
    m.coef_ = r.get_vector<double>();
    m.lambda_ = r.get<double>();
    m.res_lo_ = r.get<double>();
    m.res_hi_ = r.get<double>();
    if (m.mean_.size() != features || m.stdev_.size() != features || m.coef_.size() != columns)
      throw bad("ridge dimensions do not match the feature schema and axes");
    for (const auto* v : {&m.mean_, &m.stdev_, &m.coef_})
      for (double x : *v)
        if (!std::isfinite(x)) throw bad("ridge value not finite");
    for (double s : m.stdev_)
      if (!(s > 0)) throw bad("ridge standard deviation not positive");
    if (!std::isfinite(m.lambda_) || !std::isfinite(m.res_lo_) || !std::isfinite(m.res_hi_))
      throw bad("ridge value not finite");
    return m;
  }

 private:
  std::vector<double> mean_, stdev_, coef_;
  double lambda_ = 0, res_lo_ = 0, res_hi_ = 0;
  void row(const SurrogateDataset& d, std::uint32_t w, std::size_t i, const std::vector<float>& setting,
           double* out) const;
};

}  // namespace slurmtwin::surrogate

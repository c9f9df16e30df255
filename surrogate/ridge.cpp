#include "surrogate/ridge.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

namespace slurmtwin::surrogate {
namespace {

struct Layout {
  std::size_t f, p, q, k, cols;
  explicit Layout(const SurrogateDataset& d)
      : f(d.schema.numeric.size()),
        p(d.schema.partitions.size() + 1),
        q(d.schema.qos.size() + 1),
        k(d.axes.size()),
        cols(RidgeBaseline::columns_for(d.schema, d.axes.size())) {}
};

// Rows (window, job, setting) with a known target, sampled with an even stride down to `max_rows`.
struct RowRef {
  std::uint32_t w, s;
  std::uint32_t i;
};
std::vector<RowRef> rows_of(const SurrogateDataset& d, const std::vector<std::uint32_t>& windows,
                            const std::vector<std::uint32_t>& settings, std::size_t max_rows) {
  std::vector<RowRef> rows;
  for (auto w : windows)
    for (auto s : settings)
      for (std::uint32_t i = 0; i < d.windows[w].jobs; ++i)
        if (d.windows[w].target[i] && !std::isnan(d.waits[w][s * d.windows[w].jobs + i]))
          rows.push_back({w, s, i});
  if (rows.size() <= max_rows) return rows;
  std::vector<RowRef> kept;
  kept.reserve(max_rows);
  for (std::size_t k = 0; k < max_rows; ++k) kept.push_back(rows[k * rows.size() / max_rows]);
  return kept;
}

double target(const SurrogateDataset& d, const RowRef& r) {
  return std::log1p(std::max(0.0f, d.waits[r.w][r.s * d.windows[r.w].jobs + r.i]));
}

}  // namespace

void RidgeBaseline::row(const SurrogateDataset& d, std::uint32_t w, std::size_t i,
                        const std::vector<float>& setting, double* out) const {
  const Layout l(d);
  const auto& win = d.windows[w];
  std::fill(out, out + l.cols, 0.0);
  out[0] = 1.0;
  for (std::size_t k = 0; k < l.f; ++k) out[1 + k] = (win.numeric[i * l.f + k] - mean_[k]) / stdev_[k];
  out[1 + l.f + static_cast<std::size_t>(win.partition[i])] = 1.0;
  out[1 + l.f + l.p + static_cast<std::size_t>(win.qos[i])] = 1.0;
  const std::size_t s0 = 1 + l.f + l.p + l.q;
  for (std::size_t a = 0; a < l.k; ++a) {
    out[s0 + a] = setting[a];
    for (std::size_t k = 0; k < l.f; ++k) out[s0 + l.k + a * l.f + k] = setting[a] * out[1 + k];
  }
}

RidgeBaseline RidgeBaseline::fit(const SurrogateDataset& d, const std::vector<std::uint32_t>& train_windows,
                                 const std::vector<std::uint32_t>& train_settings,
                                 const std::vector<std::uint32_t>& val_windows,
                                 const std::vector<std::uint32_t>& val_settings, std::size_t max_rows) {
  const Layout l(d);
  RidgeBaseline m;
  m.mean_.assign(l.f, 0.0);
  m.stdev_.assign(l.f, 1.0);
  double n = 0;
  std::vector<double> sq(l.f, 0.0);
  for (auto w : train_windows)
    for (std::size_t i = 0; i < d.windows[w].jobs; ++i, n += 1)
      for (std::size_t k = 0; k < l.f; ++k) {
        const double v = d.windows[w].numeric[i * l.f + k];
        m.mean_[k] += v;
        sq[k] += v * v;
      }
  for (std::size_t k = 0; k < l.f && n > 0; ++k) {
    m.mean_[k] /= n;
    const double var = sq[k] / n - m.mean_[k] * m.mean_[k];
    m.stdev_[k] = var > 1e-12 ? std::sqrt(var) : 1.0;
  }
  std::vector<std::vector<float>> enc(d.setting_count());
  for (std::size_t s = 0; s < d.setting_count(); ++s) enc[s] = d.encoded_setting(s);

  // Normal equations, accumulated row by row (rows can be many; columns are ~200).
  Eigen::MatrixXd xtx =
      Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(l.cols), static_cast<Eigen::Index>(l.cols));
  Eigen::VectorXd xty = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(l.cols));
  Eigen::VectorXd x(static_cast<Eigen::Index>(l.cols));
  const auto train = rows_of(d, train_windows, train_settings, max_rows);
  for (const auto& r : train) {
    m.row(d, r.w, r.i, enc[r.s], x.data());
    xtx.selfadjointView<Eigen::Lower>().rankUpdate(x);
    xty += x * target(d, r);
  }
  xtx = xtx.selfadjointView<Eigen::Lower>();
  const auto val = rows_of(d, val_windows.empty() ? train_windows : val_windows,
                           val_settings.empty() ? train_settings : val_settings, max_rows / 4);
  double best = std::numeric_limits<double>::infinity();
  const auto cols = static_cast<Eigen::Index>(l.cols);
  for (double lambda : {1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3}) {
    Eigen::MatrixXd a = xtx;
    a.diagonal().array() += lambda * static_cast<double>(train.size()) / 1e4;
    a(0, 0) -= lambda * static_cast<double>(train.size()) / 1e4;  // no penalty on the intercept
    const Eigen::VectorXd coef = a.ldlt().solve(xty);
    double err = 0;
    for (const auto& r : val) {
      m.row(d, r.w, r.i, enc[r.s], x.data());
      const double e = x.dot(coef) - target(d, r);
      err += e * e;
    }
    if (err < best) {
      best = err;
      m.lambda_ = lambda;
      m.coef_.assign(coef.data(), coef.data() + cols);
    }
  }
  // Interval: the 10% and 90% quantiles of the training residuals.
  std::vector<double> res;
  const Eigen::Map<const Eigen::VectorXd> coef(m.coef_.data(), cols);
  for (const auto& r : train) {
    m.row(d, r.w, r.i, enc[r.s], x.data());
    res.push_back(target(d, r) - x.dot(coef));
  }
  if (!res.empty()) {
    std::sort(res.begin(), res.end());
    m.res_lo_ = res[res.size() / 10];
    m.res_hi_ = res[res.size() * 9 / 10];
  }
  return m;
}

std::vector<std::array<float, 3>> RidgeBaseline::predict(const SurrogateDataset& d, std::uint32_t w,
                                                         std::uint32_t s) const {
  const Layout l(d);
  std::vector<double> x(l.cols);
  const auto enc = d.encoded_setting(s);
  std::vector<std::array<float, 3>> out(d.windows[w].jobs);
  for (std::size_t i = 0; i < out.size(); ++i) {
    row(d, w, i, enc, x.data());
    double y = 0;
    for (std::size_t c = 0; c < l.cols; ++c) y += x[c] * coef_[c];
    out[i] = {static_cast<float>(y + res_lo_), static_cast<float>(y), static_cast<float>(y + res_hi_)};
  }
  return out;
}

RidgeBaseline::Terms RidgeBaseline::terms(const SurrogateDataset& d) const {
  const Layout l(d);
  const auto at = [&](std::size_t from, std::size_t n) {
    return std::vector<double>(coef_.begin() + static_cast<std::ptrdiff_t>(from),
                               coef_.begin() + static_cast<std::ptrdiff_t>(from + n));
  };
  Terms t;
  t.intercept = coef_[0];
  t.mean = mean_;
  t.stdev = stdev_;
  t.numeric = at(1, l.f);
  t.partition = at(1 + l.f, l.p);
  t.qos = at(1 + l.f + l.p, l.q);
  const std::size_t s0 = 1 + l.f + l.p + l.q;
  t.setting = at(s0, l.k);
  for (std::size_t a = 0; a < l.k; ++a) t.cross.push_back(at(s0 + l.k + a * l.f, l.f));
  return t;
}

std::size_t RidgeBaseline::columns_for(const FeatureSchema& schema, std::size_t axes) {
  const std::size_t f = schema.numeric.size();
  return 1 + f + (schema.partitions.size() + 1) + (schema.qos.size() + 1) + axes + axes * f;
}

void RidgeBaseline::put(ByteWriter& w) const {
  w.put_vector(mean_);
  w.put_vector(stdev_);
  w.put_vector(coef_);
  w.put(lambda_);
  w.put(res_lo_);
  w.put(res_hi_);
}

}  // namespace slurmtwin::surrogate

// Min/max bucketing (decimate.hpp).
#include "report/decimate.hpp"

#include <cmath>

namespace dltune::report {

void decimate_series(const std::vector<std::int64_t>& time_ms, const std::vector<double>& values,
                     std::size_t max_points, std::vector<std::int64_t>& out_time,
                     std::vector<double>& out_values) {
  out_time.clear();
  out_values.clear();
  const std::size_t n = values.size();
  if (n <= max_points) {
    out_time = time_ms;
    out_values = values;
    return;
  }
  const std::size_t buckets = max_points / 2;
  out_time.reserve(buckets * 2);
  out_values.reserve(buckets * 2);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
    std::size_t min = hi, max = hi;
    for (std::size_t i = lo; i < hi; ++i) {
      const double v = values[i];
      if (std::isnan(v)) continue;
      if (min == hi || v < values[min]) min = i;
      if (max == hi || v > values[max]) max = i;
    }
    if (min == hi) {  // nothing but nulls: one null keeps the gap in the line
      out_time.push_back(time_ms[lo]);
      out_values.push_back(kNull);
      continue;
    }
    const std::size_t first = min < max ? min : max, second = min < max ? max : min;
    out_time.push_back(time_ms[first]);
    out_values.push_back(values[first]);
    if (second != first) {
      out_time.push_back(time_ms[second]);
      out_values.push_back(values[second]);
    }
  }
}

void decimate(ReportData& data, std::size_t max_points) {
  if (max_points < 2) max_points = 2;
  data.max_points = max_points;
  if (data.time_ms.size() <= max_points) return;
  for (auto& s : data.series) {
    std::vector<std::int64_t> t;
    std::vector<double> v;
    decimate_series(data.time_ms, s.values, max_points, t, v);
    s.time_ms = std::move(t);
    s.values = std::move(v);
  }
  data.time_ms.clear();
  data.time_ms.shrink_to_fit();
  data.decimated = true;
}

}  // namespace dltune::report

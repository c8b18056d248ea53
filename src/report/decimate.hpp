#pragma once
// Decimation for long runs (docs/report.md): a series longer than the bound is cut into buckets
// of consecutive samples, and each bucket keeps its smallest and its largest value at their own
// times, so that a one-sample spike survives (an average would flatten it).
#include <cstddef>

#include "report/series.hpp"

namespace dltune::report {

// Every series to at most `max_points` points (at least 2). With more samples than that, the
// window is cut into max_points / 2 buckets of consecutive samples (as equal as integers allow);
// a bucket keeps its minimum and its maximum in time order (one point when they are the same
// sample), or one null when it holds no value. Each series then carries its own times and the
// shared axis is cleared. Fewer samples than the bound: nothing changes.
void decimate(ReportData& data, std::size_t max_points);

// One series' values on `time_ms`, as above: the kept times and values.
void decimate_series(const std::vector<std::int64_t>& time_ms, const std::vector<double>& values,
                     std::size_t max_points, std::vector<std::int64_t>& out_time,
                     std::vector<double>& out_values);

}  // namespace dltune::report

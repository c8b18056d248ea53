#include "launch/progress.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

namespace dltune::launch {
namespace {

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word(char c) {
  return is_alpha(c) || is_digit(c) || c == '_';
}

// tqdm's unit_scale prefixes (tqdm.format_sizeof, divisor 1000 by default).
double scale_of(char c) {
  switch (c) {
    case 'k':
      return 1e3;
    case 'M':
      return 1e6;
    case 'G':
      return 1e9;
    case 'T':
      return 1e12;
    case 'P':
      return 1e15;
    case 'E':
      return 1e18;
    case 'Z':
      return 1e21;
    case 'Y':
      return 1e24;
    default:
      return 0;
  }
}

std::optional<double> to_number(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The number [0-9.]+ that ends just before `end`, standing on its own (not the tail of a word:
// "v1.2it/s" has no rate).
std::optional<double> number_before(std::string_view line, std::size_t end) {
  std::size_t start = end;
  bool digit = false;
  while (start > 0 && (is_digit(line[start - 1]) || line[start - 1] == '.')) {
    digit = digit || is_digit(line[start - 1]);
    --start;
  }
  if (!digit || (start > 0 && is_word(line[start - 1]))) return std::nullopt;
  return to_number(line.substr(start, end - start));
}

// "<number>[kMG…]<unit>/s" with '/' at `slash`.
std::optional<RateReading> per_second_at(std::string_view line, std::size_t slash) {
  if (slash + 1 >= line.size() || line[slash + 1] != 's') return std::nullopt;
  if (slash + 2 < line.size() && is_word(line[slash + 2])) return std::nullopt;
  std::size_t begin = slash;
  while (begin > 0 && is_alpha(line[begin - 1])) --begin;
  const auto letters = line.substr(begin, slash - begin);
  if (letters.empty()) return std::nullopt;
  const auto n = number_before(line, begin);
  if (!n) return std::nullopt;
  // "14.9Mit/s": a scale prefix when more letters follow it (tqdm's unit_scale).
  if (letters.size() >= 2 && scale_of(letters[0]) > 0)
    return RateReading{*n * scale_of(letters[0]), std::string(letters.substr(1)) + "/s"};
  return RateReading{*n, std::string(letters) + "/s"};
}

// "<number>[kMG…]s/<unit>" (tqdm prints seconds per unit below one unit a second).
std::optional<RateReading> seconds_per_at(std::string_view line, std::size_t slash) {
  if (slash < 2 || line[slash - 1] != 's') return std::nullopt;
  std::size_t end = slash + 1;
  while (end < line.size() && is_alpha(line[end])) ++end;
  const auto unit = line.substr(slash + 1, end - slash - 1);
  if (unit.empty() || (end < line.size() && is_word(line[end]))) return std::nullopt;
  double scale = 1;
  std::size_t number_end = slash - 1;
  if (scale_of(line[slash - 2]) > 0) {
    scale = scale_of(line[slash - 2]);
    --number_end;
  }
  const auto n = number_before(line, number_end);
  if (!n || *n <= 0) return std::nullopt;
  return RateReading{1.0 / (*n * scale), std::string(unit) + "/s"};
}

std::optional<RateReading> read_tqdm(std::string_view line) {
  std::optional<RateReading> last;
  for (std::size_t i = line.find('/'); i != std::string_view::npos; i = line.find('/', i + 1)) {
    if (auto r = per_second_at(line, i)) {
      last = std::move(r);
    } else if (auto r2 = seconds_per_at(line, i)) {
      last = std::move(r2);
    }
  }
  return last;
}

std::optional<RateReading> read_custom(std::string_view line, const RatePattern& re) {
  std::optional<RateReading> last;
  re.each_match(line, [&](std::string_view text) {
    if (auto v = to_number(text)) last = RateReading{*v, ""};
  });
  return last;
}

}  // namespace

std::optional<RateReading> read_rate(std::string_view line,
                                     const std::optional<RatePattern>& custom) {
  return custom ? read_custom(line, *custom) : read_tqdm(line);
}

std::optional<double> parse_rate(std::string_view line, const std::optional<RatePattern>& custom) {
  if (auto r = read_rate(line, custom)) return r->per_second;
  return std::nullopt;
}

void RateSeries::add(double rate) {
  last_ = rate;
  ++count_;
  if (seen_++ % stride_ == 0) kept_.push_back(rate);
  if (kept_.size() >= kCapacity) {
    std::size_t out = 0;
    for (std::size_t i = 0; i < kept_.size(); i += 2) kept_[out++] = kept_[i];
    kept_.resize(out);
    stride_ *= 2;
  }
}

double RateSeries::median_after_warmup() const {
  if (kept_.empty()) return 0;
  std::vector<double> v(kept_.begin() + static_cast<std::ptrdiff_t>(kept_.size() / 10),
                        kept_.end());
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double upper = *mid;
  const double lower = *std::max_element(v.begin(), mid);
  return (lower + upper) / 2;
}

ProgressMeter::ProgressMeter(std::optional<RatePattern> custom) : custom_(std::move(custom)) {}

void ProgressMeter::feed(std::string_view bytes, std::size_t channel) {
  // A job that never ends a line must not grow this without bound: a rate sits at the end of a
  // progress line, so the tail is what matters.
  constexpr std::size_t kMaxSegment = 64 * 1024, kKeep = 4 * 1024;
  auto& pending = pending_[channel < pending_.size() ? channel : 0];
  while (!bytes.empty()) {
    const auto cut = bytes.find_first_of("\r\n");
    if (cut == std::string_view::npos) {
      pending.append(bytes);
      if (pending.size() > kMaxSegment) pending.erase(0, pending.size() - kKeep);
      return;
    }
    if (pending.empty()) {
      segment(bytes.substr(0, cut));
    } else {
      pending.append(bytes.substr(0, cut));
      segment(pending);
      pending.clear();
    }
    bytes.remove_prefix(cut + 1);
  }
}

void ProgressMeter::finish() {
  for (auto& pending : pending_) {
    if (!pending.empty()) segment(pending);
    pending.clear();
  }
}

void ProgressMeter::segment(std::string_view line) {
  if (line.empty()) return;
  if (auto r = read_rate(line, custom_)) series_[r->unit].add(r->per_second);
}

Progress ProgressMeter::progress() const {
  Progress p;
  const RateSeries* best = nullptr;
  for (const auto& [unit, series] : series_) {
    if (!best || series.count() > best->count()) {
      best = &series;
      p.unit = unit;
    }
  }
  if (!best) return p;
  p.last_rate = best->last();
  p.median_rate = best->median_after_warmup();
  p.samples = best->count();
  return p;
}

}  // namespace dltune::launch

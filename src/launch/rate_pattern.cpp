#include "launch/rate_pattern.hpp"

#include <regex>

namespace dltune::launch {

struct RatePattern::Compiled {
  std::string pattern;
  std::regex re;
};

Result<RatePattern> RatePattern::compile(const std::string& pattern) {
  try {
    auto c =
        std::make_shared<Compiled>(Compiled{pattern, std::regex(pattern, std::regex::ECMAScript)});
    return RatePattern(std::move(c));
  } catch (const std::regex_error& e) {
    return fail(e.what());
  }
}

const std::string& RatePattern::pattern() const {
  return compiled_->pattern;
}

std::size_t RatePattern::groups() const {
  return compiled_->re.mark_count();
}

void RatePattern::each_match(std::string_view line,
                             const std::function<void(std::string_view)>& each) const {
  const auto& re = compiled_->re;
  const int group = re.mark_count() > 0 ? 1 : 0;
  for (auto it = std::cregex_iterator(line.data(), line.data() + line.size(), re);
       it != std::cregex_iterator(); ++it) {
    const auto& m = (*it)[group];
    if (!m.matched) continue;
    each(std::string_view(m.first, static_cast<std::size_t>(m.length())));
  }
}

}  // namespace dltune::launch

#pragma once
// The parts of the HTML page (internal to report/): html_output.cpp assembles the page, the
// recording card, events and charts; html_facts.cpp renders the recorded documents (env, check,
// profile). Everything written through Page::text is escaped.
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/output.hpp"
#include "report/series.hpp"

namespace dltune::report {

class Page {
 public:
  explicit Page(std::ostream& out) : out_(out) {}
  Page& raw(std::string_view s) {
    out_.write(s.data(), static_cast<std::streamsize>(s.size()));
    return *this;
  }
  Page& text(std::string_view s) { return raw(html_escape(s)); }
  // A row of a key/value table; left out when the value is empty.
  Page& row(std::string_view key, std::string_view value) {
    if (value.empty()) return *this;
    return raw("<tr><th>").text(key).raw("</th><td>").text(value).raw("</td></tr>\n");
  }
  Page& code_row(std::string_view key, std::string_view value) {
    if (value.empty()) return *this;
    return raw("<tr><th>").text(key).raw("</th><td><code>").text(value).raw("</code></td></tr>\n");
  }

 private:
  std::ostream& out_;
};

// html_facts.cpp: the host's env facts (a card), the check findings, the profile verdict.
void host_card(Page& p, const ReportData& d);
void findings(Page& p, const ReportData& d);
void profile(Page& p, const ReportData& d);

}  // namespace dltune::report

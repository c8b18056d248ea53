#pragma once
// A report's two forms (docs/report.md): the JSON document (`--format json`, also the data
// inside the HTML page) and the self-contained HTML page.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "report/series.hpp"

namespace dltune::report {

inline constexpr std::string_view kJsonSchema = "dltune.report/1";

struct JsonOptions {
  // Every '<' written as \u003c, so that the document can sit inside a <script> element and no
  // "</script>" or "<!--" in a command line or an event text can end it.
  bool for_script = false;
};

// The series, sections, markers and the recording's info as one JSON document. Numbers are
// written short: integers as integers, others with 6 significant digits; NaN as null.
void write_json(const ReportData& data, std::ostream& out, JsonOptions options = {});

struct HtmlOptions {
  std::string recording_path;  // shown at the top
};

// The HTML page: Chart.js, the report's script and style and the data (write_json) inlined, the
// recording's info, env facts, check findings and profile verdict at the top, then one <canvas>
// per chart. Everything from the recording is HTML-escaped.
void write_html(const ReportData& data, std::ostream& out, const HtmlOptions& options = {});

// & < > " ' as entities.
[[nodiscard]] std::string html_escape(std::string_view s);

}  // namespace dltune::report

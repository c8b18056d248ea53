#pragma once
// The files a report inlines, compiled into the program (cmake/embed_file.cmake), so that a
// report is one self-contained HTML file that needs no network to be viewed.
#include <string_view>

namespace dltune::report {

// Chart.js 3.9.1, the minified UMD build from Debian's libjs-chart.js
// (/usr/share/javascript/chart.js/chart.min.js), with its licence header.
[[nodiscard]] std::string_view chartjs_source();
// The report's own script and style sheet (src/report/page/).
[[nodiscard]] std::string_view page_script();
[[nodiscard]] std::string_view page_style();
// The script of the A/B comparison page (compare_html.hpp).
[[nodiscard]] std::string_view compare_script();

}  // namespace dltune::report

#pragma once
// The HTML page of `dltune bench` / `dltune compare`: one self-contained file (Chart.js, the
// style and the data inlined, nothing loaded from anywhere) for a dltune.compare/1 document
// (docs/json.md).
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace dltune::report {

// The page for a dltune.compare/1 document: the verdict, the table of metrics, and two charts.
//
// The verdict, the tables and the notes are rendered here, HTML-escaped (labels are user text:
// profile names, file names, commands). The charts are drawn in the browser from the document,
// inlined in a <script type="application/json"> with every '<' written as \u003c: "chart-runs"
// (the primary metric per run, A and B, left-out runs as crosses) when some run has a value of
// it, and "chart-ratios" (B/A with its interval per metric, a line at 1) when some metric has an
// interval; otherwise a sentence says why that chart is not there. Once drawn, the page sets
// <body data-charts="N"> to the number of charts drawn, and data-error to the message of any
// script error.
//
// Keys that are missing or of another type are shown as absent, never thrown on: a document
// from an older or newer dltune still gives a page.
[[nodiscard]] std::string compare_html(const nlohmann::json& comparison);

}  // namespace dltune::report

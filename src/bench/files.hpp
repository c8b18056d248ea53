#pragma once
// The files of a bench directory: bench.json (dltune.bench/1) next to the recordings
// and logs it names, so that `dltune compare DIR` reads the same runs again; and the HTML page.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/comparison.hpp"
#include "core/error.hpp"

namespace dltune::bench {

// Writes DIR/bench.json (through a temporary file and rename) and, when `html` is not empty,
// the comparison's page there (an existing file replaced only when `replace_html`; never anything
// but a regular file: core/local_file). Under sudo (SUDO_UID in `environment`) the directory and
// its files are given to the invoking user, whose results they are.
[[nodiscard]] Result<void> write_bench_files(const std::string& dir, const nlohmann::json& bench,
                                             const std::string& html, bool replace_html,
                                             const std::map<std::string, std::string>& environment);
// Writes the comparison's HTML page to `path` (through a temporary file and rename; an existing
// file replaced only when `replace`).
[[nodiscard]] Result<void> write_compare_html(const std::string& path,
                                              const nlohmann::json& comparison, bool replace);

// The directory for a bench's files: `dir`, or ./dltune-bench-DATE-TIME when empty; created, or
// taken when it exists and is empty (anything else is refused, naming --out).
[[nodiscard]] Result<std::string> make_directory(std::string dir);

struct BenchDirectory {
  std::string label_a, label_b;
  std::vector<Run> runs;  // recordings read, paths made absolute
};
// Reads DIR/bench.json and every recording it names. Errors name the file: no bench.json, not
// dltune.bench/1, a recording missing (named).
[[nodiscard]] Result<BenchDirectory> read_bench_directory(const std::string& dir);

// Recordings given by hand (`compare A.db B.db`, `-a ... -b ...`), each a run of its side; a file
// that is not a run is an error naming it. Labels: the file, or "N runs (FIRST ...)".
[[nodiscard]] Result<BenchDirectory> read_given_runs(const std::vector<std::string>& a,
                                                     const std::vector<std::string>& b);

// What `compare` is given, read: a directory `bench` wrote (its rounds pair the runs); two
// recordings (A.db B.db); or `-a FILE ... -b FILE ...`. The labels are the directory's or the
// files', unless `label_a`/`label_b` are given. Errors: any other combination (saying what is
// expected), and read_bench_directory's and read_given_runs'.
struct CompareInput {
  std::vector<Run> runs;
  CompareOptions options;
};
[[nodiscard]] Result<CompareInput> read_compare_input(const std::vector<std::string>& paths,
                                                      std::vector<std::string> a,
                                                      std::vector<std::string> b,
                                                      const std::string& label_a,
                                                      const std::string& label_b);

// `dltune compare`'s options as given.
struct CompareChoices {
  std::vector<std::string> paths, a, b;  // A.db B.db or BENCH_DIR; -a, -b
  std::string label_a, label_b;
  double confidence = 95;  // in percent
  std::string html;        // --html FILE, written after the comparison (write_compare_html)
  bool force = false;      // --html may replace a file
};
// The comparison the choices ask for: --html checked first (an output, and none of the inputs),
// then read_compare_input and compare_runs. Every error is the input's: nothing was written.
[[nodiscard]] Result<Comparison> compare_choices(const CompareChoices& choices);

}  // namespace dltune::bench

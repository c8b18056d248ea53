#include "bench/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/time_format.hpp"
#include "launch/spawn.hpp"
#include "report/compare_html.hpp"

namespace dltune::bench {

namespace {

namespace fs = std::filesystem;

Result<void> write_file(const std::string& path, const std::string& content, bool replace) {
  return local_file::write(
      path, replace, [&](std::ostream& out) { out << content; }, "bench's results");
}

}  // namespace

Result<std::string> make_directory(std::string dir) {
  if (dir.empty())
    dir =
        text::format_time(std::time(nullptr), "dltune-bench-%Y%m%d-%H%M%S", text::TimeZone::kLocal);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec))
      return fail("exists and is not an empty directory; choose another --out", "--out " + dir);
  } else if (::mkdir(dir.c_str(), 0755) != 0) {
    return fail("cannot create the directory", "--out " + dir, errno);
  }
  return dir;
}

Result<void> write_compare_html(const std::string& path, const nlohmann::json& comparison,
                                bool replace) {
  return write_file(path, report::compare_html(comparison), replace);
}

Result<void> write_bench_files(const std::string& dir, const nlohmann::json& bench,
                               const std::string& html, bool replace_html,
                               const std::map<std::string, std::string>& environment) {
  if (auto w = write_file(dir + "/bench.json", bench.dump(2) + "\n", true); !w) return w;
  if (!html.empty())
    if (auto w = write_compare_html(html, bench["comparison"], replace_html); !w) return w;
  auto user = launch::sudo_user(environment);
  if (user && *user && ::geteuid() == 0) {
    const auto give = [&](const fs::path& p) -> Result<void> {
      if (::lchown(p.c_str(), (*user)->uid, (*user)->gid) != 0)
        return fail("cannot give to " + (*user)->user, p.string(), errno);
      return {};
    };
    if (auto g = give(dir); !g) return g;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (auto g = give(e.path()); !g) return g;
    if (!html.empty())
      if (auto g = give(html); !g) return g;
  }
  return {};
}

Result<BenchDirectory> read_bench_directory(const std::string& dir) {
  const std::string path = dir + "/bench.json";
  std::ifstream in(path);
  if (!in) return fail("cannot read (is it a directory `dltune bench --out` wrote?)", path, errno);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("is not JSON: ") + e.what(), path);
  }
  if (!doc.is_object() || doc.value("schema", "") != "dltune.bench/1")
    return fail("is not a bench manifest (expected schema dltune.bench/1)", path);
  BenchDirectory d;
  try {
    d.label_a = doc.at("a").at("label").get<std::string>();
    d.label_b = doc.at("b").at("label").get<std::string>();
    for (const auto& r : doc.at("comparison").at("runs")) {
      Run run;
      const auto side = r.at("side").get<std::string>();
      if (side != "A" && side != "B") return fail("a run's side is not A or B", path);
      run.side = side[0];
      run.pair = r.at("pair").get<int>();
      run.warmup = r.at("warmup").get<bool>();
      const auto rec = r.at("recording").get<std::string>();
      if (rec.empty() || rec.find('/') != std::string::npos)
        return fail("a run's recording is not a file name in the directory", path);
      run.recording = (fs::path(dir) / rec).string();
      if (r.contains("log")) run.log = (fs::path(dir) / r.at("log").get<std::string>()).string();
      if (run.warmup) {
        d.runs.push_back(std::move(run));
        continue;
      }
      auto m = read_run(run.recording);
      if (m)
        run.metrics = std::move(*m);
      else
        run.read_error = m.error().message();
      d.runs.push_back(std::move(run));
    }
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("is not a complete bench manifest: ") + e.what(), path);
  }
  return d;
}

Result<BenchDirectory> read_given_runs(const std::vector<std::string>& a,
                                       const std::vector<std::string>& b) {
  BenchDirectory d;
  for (const auto& [side, files] : {std::pair{'A', &a}, std::pair{'B', &b}}) {
    for (const auto& f : *files) {
      Run r;
      r.side = side;
      r.recording = f;
      auto m = read_run(f);
      if (!m) return tl::unexpected(m.error());
      r.metrics = std::move(*m);
      d.runs.push_back(std::move(r));
    }
  }
  const auto label = [](const std::vector<std::string>& files) {
    if (files.empty()) return std::string();
    return files.size() == 1 ? files[0] : fmt::format("{} runs ({} ...)", files.size(), files[0]);
  };
  d.label_a = label(a);
  d.label_b = label(b);
  return d;
}

Result<CompareInput> read_compare_input(const std::vector<std::string>& paths,
                                        std::vector<std::string> a, std::vector<std::string> b,
                                        const std::string& label_a, const std::string& label_b) {
  struct stat st {};
  const bool directory = paths.size() == 1 && a.empty() && b.empty() &&
                         ::stat(paths[0].c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (!directory) {
    if (paths.size() == 2 && a.empty() && b.empty()) {
      a.push_back(paths[0]);
      b.push_back(paths[1]);
    } else if (!paths.empty() || a.empty() || b.empty()) {
      return fail(
          "expected A.db B.db, or -a FILE ... -b FILE ..., or a directory `dltune bench` wrote");
    }
  }
  auto read = directory ? read_bench_directory(paths[0]) : read_given_runs(a, b);
  if (!read) return tl::unexpected(read.error());  // a file given by hand must be a run
  CompareInput in;
  in.runs = std::move(read->runs);
  in.options.paired_by_round = directory;
  in.options.label_a = label_a.empty() ? read->label_a : label_a;
  in.options.label_b = label_b.empty() ? read->label_b : label_b;
  return in;
}

Result<Comparison> compare_choices(const CompareChoices& c) {
  if (!c.html.empty()) {
    std::vector<std::string> inputs = c.paths;
    inputs.insert(inputs.end(), c.a.begin(), c.a.end());
    inputs.insert(inputs.end(), c.b.begin(), c.b.end());
    if (auto ok = local_file::not_an_input(c.html, inputs); !ok)
      return fail("--html: " + ok.error().message());
    if (auto t = local_file::output_target(c.html, c.force); !t)
      return fail("--html: " + t.error().message());
  }
  auto input = read_compare_input(c.paths, c.a, c.b, c.label_a, c.label_b);
  if (!input) return tl::unexpected(input.error());
  input->options.confidence = c.confidence / 100;
  return compare_runs(std::move(input->runs), input->options);
}

}  // namespace dltune::bench

#include "report/make_report.hpp"

#include <cerrno>

#include "core/local_file.hpp"
#include "report/decimate.hpp"
#include "report/output.hpp"
#include "report/series.hpp"
#include "store/recording.hpp"

namespace dltune::report {

tl::expected<void, Failure> make_report(const ReportRequest& r) {
  if (auto ok = local_file::not_an_input(r.output, {r.recording}); !ok)
    return refused("-o: " + ok.error().message());
  auto recording = store::Recording::open(r.recording);
  if (!recording) return refused(recording.error());
  const auto& rec = **recording;
  if (rec.size() == 0) return refused("the recording has no samples: " + r.recording);
  auto window = window_of(rec, r.from, r.to);
  if (!window) return refused(window.error());
  const auto target = local_file::output_target(r.output, r.force);
  if (!target) return refused("-o: " + target.error().message());
  auto data = extract(rec, *window);
  if (!data) return tl::unexpected(Failure{false, data.error()});
  if (r.html || r.max_points) decimate(*data, r.max_points.value_or(4000));
  auto written = local_file::write(*target, r.force, [&](std::ostream& out) {
    if (r.html)
      write_html(*data, out, {.recording_path = r.recording});
    else
      write_json(*data, out);
  });
  // A file that appeared between the check above and the rename is bad input too.
  if (!written) return tl::unexpected(Failure{written.error().errno_ == EEXIST, written.error()});
  return {};
}

}  // namespace dltune::report

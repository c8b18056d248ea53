#include "bench/bench_choices.hpp"

#include "core/local_file.hpp"
#include "inventory/host_facts.hpp"
#include "launch/spawn.hpp"
#include "monitor/scope.hpp"

namespace dltune::bench {

Result<BenchRequest> make_request(const host::Root& root, BenchChoices choices,
                                  const std::map<std::string, std::string>& environment,
                                  const inventory::CollectOptions& collect,
                                  const ParseRun& parse_run) {
  if (choices.command.empty()) return fail("expected the job's COMMAND after --");
  if (auto found = launch::find_program(choices.command.front(), environment); !found)
    return tl::unexpected(found.error());
  BenchRequest r;
  r.command = choices.command;
  if (!choices.rate_regex.empty()) {
    auto rate = launch::compile_rate_regex(choices.rate_regex);
    if (!rate) return tl::unexpected(rate.error());
    r.rate_regex = std::move(*rate);
  }
  r.data = choices.data;
  if (!choices.html.empty())
    if (auto t = local_file::output_target(choices.html, choices.force); !t)
      return fail("--html: " + t.error().message());
  for (const auto& arg : choices.run_args)
    for (auto* side : {&choices.a, &choices.b}) side->run_args.push_back(arg);
  r.a = choices.a;
  r.b = choices.b;
  const auto facts = inventory::collect(root, collect);
  auto planned = plan_sides(root, facts, r, parse_run);
  if (!planned) return tl::unexpected(planned.error());
  r.runs = choices.runs;
  r.warmup = choices.warmup;
  r.abba = choices.order == "abba";
  r.interval_ns = choices.interval_ns;
  r.confidence = choices.confidence / 100;
  r.collect = collect;
  r.sampler = monitor::sampler_options({}, choices.interval_ns, true, collect.nvml_library);
  return r;
}

}  // namespace dltune::bench

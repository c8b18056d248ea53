// In-process cost of the inventory: how long collect() takes on the live host and on a
// fixture tree, without process start-up. Run: make bench (numbers in bench/README.md).
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "core/json.hpp"
#include "host/root.hpp"
#include "inventory/host_facts.hpp"

namespace {

void BM_CollectLive(benchmark::State& state) {
  dltune::host::Root root;
  dltune::inventory::CollectOptions options;
  for (auto _ : state) {
    auto facts = dltune::inventory::collect(root, options);
    benchmark::DoNotOptimize(facts);
  }
}
BENCHMARK(BM_CollectLive)->Unit(benchmark::kMillisecond);

void BM_CollectAndRenderJsonLive(benchmark::State& state) {
  dltune::host::Root root;
  dltune::inventory::CollectOptions options;
  for (auto _ : state) {
    auto text = dltune::inventory::to_json(dltune::inventory::collect(root, options)).dump(2);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_CollectAndRenderJsonLive)->Unit(benchmark::kMillisecond);

void BM_CollectFixture(benchmark::State& state) {
  const char* dir = std::getenv("DLTUNE_BENCH_ROOT");
  auto root = dltune::host::Root::at(dir ? dir : "tests/fixtures/roots/gpu8-numa2-cgv2");
  if (!root) {
    state.SkipWithError(root.error().message().c_str());
    return;
  }
  dltune::inventory::CollectOptions options;
  for (auto _ : state) {
    auto facts = dltune::inventory::collect(*root, options);
    benchmark::DoNotOptimize(facts);
  }
}
BENCHMARK(BM_CollectFixture)->Unit(benchmark::kMillisecond);

}  // namespace

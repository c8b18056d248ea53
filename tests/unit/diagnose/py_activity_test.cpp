// Python stacks named by activity (knowledge/python_activity.toml), tallied into the py.*
// signals, and the verdicts those signals give.
#include "diagnose/py_activity.hpp"

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "diagnose/bottleneck.hpp"
#include "diagnose/py_sampler.hpp"

namespace py_activity_test {

using namespace dltune;
using namespace dltune::diagnose;

namespace {

const PyActivities& table() {
  const auto& t = builtin_py_activities();
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

// Frames outermost first, as people read a stack; returned innermost first, as pystack gives.
std::vector<pystack::Frame> stack(std::vector<std::pair<std::string, std::string>> outer_first) {
  std::vector<pystack::Frame> out;
  for (auto it = outer_first.rbegin(); it != outer_first.rend(); ++it) {
    pystack::Frame f;
    f.file = it->first;
    f.function = it->second;
    f.line = 1;
    out.push_back(f);
  }
  return out;
}

std::string id_of(const std::vector<pystack::Frame>& frames) {
  const auto i = classify(table(), frames);
  return i < table().list.size() ? table().list[i].id : "other";
}

const std::string kSite = "/usr/lib/python3/dist-packages/";

}  // namespace

TEST(PyActivity, EachKindOfStackIsNamed) {
  // num_workers=0: the DataLoader's fetcher calls the dataset in the main process.
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"},
                         {kSite + "torch/utils/data/dataloader.py", "_BaseDataLoaderIter.__next__"},
                         {kSite + "torch/utils/data/_utils/fetch.py", "_MapDatasetFetcher.fetch"},
                         {"/work/train.py", "Samples.__getitem__"}})),
            "loading");
  // The dataset's own transform calls torch.nn.functional: still loading (the DataLoader is
  // on the stack), not the model.
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"},
                         {kSite + "torch/utils/data/dataloader.py", "__next__"},
                         {"/work/train.py", "Samples.__getitem__"},
                         {kSite + "torch/nn/functional.py", "interpolate"}})),
            "loading");
  // A dataset indexed by hand, PIL decoding under it.
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"},
                         {"/work/data.py", "Images.__getitem__"},
                         {"/venv/lib/python3.11/site-packages/PIL/Image.py", "Image.convert"}})),
            "loading");
  // With workers: the main thread waits in the DataLoader's queue.
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"},
                         {kSite + "torch/utils/data/dataloader.py", "_try_get_data"},
                         {"/usr/lib/python3.11/multiprocessing/queues.py", "Queue.get"},
                         {"/usr/lib/python3.11/multiprocessing/connection.py", "Connection.poll"},
                         {"/usr/lib/python3.11/selectors.py", "PollSelector.select"}})),
            "waiting-for-data");
  // A wait outside the DataLoader.
  EXPECT_EQ(
      id_of(stack({{"/work/train.py", "main"}, {"/usr/lib/python3.11/threading.py", "wait"}})),
      "waiting");
  // Forward, backward, the optimiser.
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"},
                         {kSite + "torch/nn/modules/module.py", "Module._call_impl"},
                         {"/work/model.py", "Net.forward"}})),
            "model");
  EXPECT_EQ(
      id_of(stack({{"/work/train.py", "main"}, {kSite + "torch/_tensor.py", "Tensor.backward"}})),
      "model");
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"}, {kSite + "torch/optim/sgd.py", "SGD.step"}})),
            "model");
  EXPECT_EQ(
      id_of(stack({{"/work/train.py", "main"}, {kSite + "torch/cuda/__init__.py", "synchronize"}})),
      "sync");
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"},
                         {"/usr/lib/python3.11/logging/__init__.py", "Logger.info"}})),
            "logging");
  // The loop's own Python: other.
  EXPECT_EQ(id_of(stack({{"/work/train.py", "main"}, {"/work/train.py", "accuracy"}})), "other");
  EXPECT_EQ(id_of({}), "other");
}

TEST(PyActivity, BadTablesAreErrorsThatNameTheActivityAndTheKey) {
  const auto bad = [](const char* text) {
    auto r = parse_py_activities(text, "t.toml");
    EXPECT_FALSE(r) << text;
    return r ? std::string() : r.error().message();
  };
  EXPECT_NE(bad("").find("no [[activity]]"), std::string::npos);
  EXPECT_NE(bad("[[activity]]\nid = \"x\"\nlabel = \"X\"\n").find("no condition"),
            std::string::npos);
  EXPECT_NE(
      bad("[[activity]]\nid = \"x\"\nlabel = \"X\"\nfiles = [1]\n").find("[[activity]] x: files"),
      std::string::npos);
  EXPECT_NE(bad("[[activity]]\nid = \"x\"\nlabel = \"X\"\nfiles = [\"/a/\"]\nfoo = 1\n")
                .find("unknown key 'foo'"),
            std::string::npos);
  EXPECT_NE(bad("[[activity]]\nid = \"other\"\nlabel = \"X\"\nfiles = [\"/a/\"]\n").find("other"),
            std::string::npos);
  EXPECT_NE(bad("[[activity]]\nid = \"x\"\nlabel = \"X\"\nfiles = [\"/a/\"]\n"
                "[[activity]]\nid = \"x\"\nlabel = \"Y\"\nfiles = [\"/b/\"]\n")
                .find("used twice"),
            std::string::npos);
  EXPECT_NE(
      bad("[[activity]]\nid = \"x\"\nlabel = \"X\"\nfiles = [\"/a/\"]\nfiles_or_functions = true\n")
          .find("needs both"),
      std::string::npos);
  EXPECT_NE(bad("[[activity]\n").find("t.toml"), std::string::npos);
}

TEST(PyActivity, AnIntervalsTallyBecomesSharesOfItsSamples) {
  const auto& a = table();
  PyTally t(a.list.size());
  const auto loading = a.index_of("loading"), model = a.index_of("model"),
             wait = a.index_of("waiting-for-data"), other = a.list.size();
  for (int i = 0; i < 6; ++i) t.add(loading, true);
  for (int i = 0; i < 2; ++i) t.add(model, true);
  for (int i = 0; i < 2; ++i) t.add(other, true);
  for (int i = 0; i < 10; ++i) t.add(wait, false);
  EXPECT_EQ(t.samples(), 20u);
  EXPECT_EQ(t.running_samples(), 10u);
  SignalValues v{};
  set_py_signals(v, t, a);
  const auto at = [&v](Signal s) { return v[static_cast<std::size_t>(s)]; };
  EXPECT_DOUBLE_EQ(*at(Signal::kPySamples), 20);
  EXPECT_DOUBLE_EQ(*at(Signal::kPyLoading), 0.6);  // of the 10 on a CPU
  EXPECT_DOUBLE_EQ(*at(Signal::kPyModel), 0.2);
  EXPECT_DOUBLE_EQ(*at(Signal::kPyPython), 0.2);
  EXPECT_DOUBLE_EQ(*at(Signal::kPyWaitData), 0.5);  // of all 20
  EXPECT_DOUBLE_EQ(*at(Signal::kPySync), 0);
  // Nothing read: no py.* signal at all (absent, never 0).
  SignalValues none{};
  t.clear();
  set_py_signals(none, t, a);
  EXPECT_FALSE(none[static_cast<std::size_t>(Signal::kPySamples)]);
  EXPECT_FALSE(none[static_cast<std::size_t>(Signal::kPyLoading)]);
  // Read, but never on a CPU: the on-CPU shares are unknown, the waits known.
  t.add(wait, false);
  SignalValues asleep{};
  set_py_signals(asleep, t, a);
  EXPECT_FALSE(asleep[static_cast<std::size_t>(Signal::kPyLoading)]);
  EXPECT_DOUBLE_EQ(*asleep[static_cast<std::size_t>(Signal::kPyWaitData)], 1.0);
}

TEST(PyActivity, CollapsedStacksAreOutermostFirst) {
  EXPECT_EQ(store::collapsed(stack({{"/work/train.py", "main"},
                                    {"/x/torch/nn/modules/module.py", "Module._call_impl"}})),
            "train.py:main;module.py:Module._call_impl");
  EXPECT_EQ(store::collapsed({}), "");
}

// A recording's "python_stacks" document: written and read back the same; a damaged one is an
// error naming what is wrong; its summary names the activities and the top stacks.
TEST(PyStacksDocument, RoundTripsAndRefusesDamage) {
  store::PythonStacks p;
  p.interpreter = "CPython 3.11.2";
  p.pid = 42;
  p.sample_interval_ns = 20'000'000;
  for (const auto& [file, fn] : std::vector<std::pair<std::string, std::string>>{
           {"/work/train.py", "main"},
           {"/x/torch/utils/data/_utils/fetch.py", "_MapDatasetFetcher.fetch"},
           {"/work/train.py", "Samples.__getitem__"},
           {"/x/torch/nn/modules/module.py", "Module._call_impl"}}) {
    pystack::Frame f;
    f.file = file;
    f.function = fn;
    p.frames.push_back(f);
  }
  p.stacks = {{2, 1, 0}, {3, 0}};  // innermost first: loading, the model
  p.totals = {30, 10, 2};          // and 2 in "other stacks"
  p.samples = 42;
  store::StackInterval iv;
  iv.wall_ns = 1'000;
  store::StackCount a;
  a.stack = 0;
  a.running = 30;
  store::StackCount b;
  b.stack = 1;
  b.running = 10;
  store::StackCount o;
  o.waiting = 2;
  iv.counts = {a, b, o};
  p.intervals.push_back(iv);
  const auto back = store::PythonStacks::from_json(p.to_json());
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->frames_of(0), p.frames_of(0));
  EXPECT_EQ(back->stacks, p.stacks);
  EXPECT_EQ(back->totals, p.totals);
  ASSERT_EQ(back->intervals.size(), 1u);
  EXPECT_EQ(back->intervals[0].counts.size(), 3u);
  EXPECT_EQ(back->intervals[0].counts[2].stack, store::kOtherStacks);

  // The interval as a tally, and the window's summary.
  StackActivities names(table());
  const auto t = names.tally(back->intervals[0], [&](int id) { return back->frames_of(id); });
  EXPECT_EQ(t.running[table().index_of("loading")], 30u);
  EXPECT_EQ(t.running[table().index_of("model")], 10u);
  EXPECT_EQ(t.waiting[table().list.size()], 2u);
  const auto s = summary_of(*back, table());
  EXPECT_EQ(s.samples, 42u);
  EXPECT_EQ(s.by_activity[table().index_of("loading")], 30u);
  ASSERT_FALSE(s.top_stacks.empty());
  EXPECT_EQ(s.top_stacks[0].first,
            "train.py:main;fetch.py:_MapDatasetFetcher.fetch;train.py:Samples.__getitem__");

  auto damaged = p.to_json();
  damaged["stacks"][0][0] = 99;  // no such frame
  EXPECT_FALSE(store::PythonStacks::from_json(damaged));
  damaged = p.to_json();
  damaged["intervals"][0]["counts"][0][0] = 7;  // no such stack
  EXPECT_FALSE(store::PythonStacks::from_json(damaged));
  damaged = p.to_json();
  damaged.erase("frames");
  const auto e = store::PythonStacks::from_json(damaged);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("python_stacks"), std::string::npos);
  EXPECT_FALSE(store::PythonStacks::from_json(nlohmann::json::object()));
}

}  // namespace py_activity_test

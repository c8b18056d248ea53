#include "inventory/python.hpp"
#include "support/build_paths.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "support/temp_tree.hpp"

namespace python_test {

namespace fs = std::filesystem;
using dltune::host::Root;
using dltune::inventory::collect_python;
using dltune::inventory::Context;
using dltune::inventory::Interpreter;
using dltune::inventory::PythonFacts;
using Env = std::map<std::string, std::string>;

namespace {

class PythonTree : public ::testing::Test {
 protected:
  void write(const std::string& rel, const std::string& content = "") { tree_.write(rel, content); }
  void link(const std::string& rel, const std::string& target) { tree_.link(rel, target); }
  PythonFacts collect(const Env& env) {
    auto r = Root::at(tree_.dir());
    EXPECT_TRUE(r.has_value()) << r.error().message();
    root_ = *r;
    ctx_ = std::make_unique<Context>(root_, env);
    return collect_python(*ctx_);
  }
  // A Debian 12 system Python with python3-torch (CPU) and python3.11-dev.
  void debian_python() {
    write("usr/bin/python3.11");
    link("usr/bin/python3", "python3.11");
    write("usr/include/python3.11/patchlevel.h",
          "#define PY_MINOR_VERSION        11\n#define PY_VERSION              \"3.11.2\"\n");
    fs::create_directories(tree_.dir() / "usr/local/lib/python3.11/dist-packages");
    write("usr/lib/python3/dist-packages/torch/version.py",
          "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\n"
          "hip = None\n");
    write("usr/lib/python3/dist-packages/torch-1.13.0a0+gitunknown.egg-info/PKG-INFO",
          "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.0a0+gitunknown\n");
  }
  dltune::testing::TempTree tree_;
  Root root_;
  std::unique_ptr<Context> ctx_;
};

const Interpreter* find(const PythonFacts& f, const std::string& resolved,
                        const std::string& source = {}) {
  for (const auto& i : f.interpreters)
    if (i.resolved == resolved && (source.empty() || i.source == source)) return &i;
  return nullptr;
}

}  // namespace

TEST_F(PythonTree, DebianSystemPythonWithCpuTorch) {
  debian_python();
  link("bin", "usr/bin");  // usrmerge: /bin/python3 is the same interpreter
  const auto f = collect({{"PATH", "/usr/local/bin:/usr/bin:/bin:/tmp/elsewhere:relative/bin::"}});
  ASSERT_EQ(f.interpreters.size(), 1u);
  const auto& i = f.interpreters[0];
  EXPECT_EQ(i.path, "/usr/bin/python3");
  EXPECT_EQ(i.resolved, "/usr/bin/python3.11");
  EXPECT_EQ(i.aliases,
            (std::vector<std::string>{"/usr/bin/python3.11", "/bin/python3", "/bin/python3.11"}));
  EXPECT_EQ(i.commands, (std::vector<std::string>{"python3", "python3.11"}));
  EXPECT_EQ(i.source, "PATH");
  EXPECT_EQ(i.prefix, "/usr");
  EXPECT_EQ(i.version, "3.11.2");
  EXPECT_EQ(i.version_source, "patchlevel.h");
  ASSERT_EQ(i.package_dirs.size(), 2u);
  EXPECT_EQ(i.package_dirs[0].path, "/usr/local/lib/python3.11/dist-packages");
  EXPECT_EQ(i.package_dirs[1].path, "/usr/lib/python3/dist-packages");
  ASSERT_TRUE(i.torch);
  EXPECT_EQ(i.torch->version, "1.13.0a0");  // version.py, not the egg-info's "+gitunknown"
  EXPECT_EQ(i.torch->cuda, std::nullopt);
  EXPECT_EQ(i.torch->cuda_build, false);
  EXPECT_EQ(i.torch->hip, std::nullopt);
  EXPECT_EQ(i.torch->git_version, "Unknown");
  EXPECT_EQ(i.torch->debug, false);
  EXPECT_EQ(i.torch->location, "/usr/lib/python3/dist-packages/torch");
  EXPECT_EQ(i.torch->metadata_version, "1.13.0a0+gitunknown");
  EXPECT_EQ(i.torch->sources, (std::vector<std::string>{"version.py", "egg-info"}));
  EXPECT_TRUE(ctx_->problems().empty());
  const auto j = to_json(f);
  EXPECT_EQ(j["interpreters"][0]["torch"]["cuda_build"], false);
  EXPECT_FALSE(j["interpreters"][0]["torch"].contains("cuda"));
  const auto text = dltune::text::render_sections(render_python(f));
  EXPECT_NE(text.find("python3.11  3.11.2  /usr/bin/python3.11  torch 1.13.0a0 (CPU-only)"),
            std::string::npos)
      << text;
}

TEST_F(PythonTree, VersionFromTheFileNameWhenNothingElseSaysIt) {
  write("usr/bin/python3.12");
  link("usr/bin/python3", "python3.12");
  write("opt/py/bin/python");  // no version in the name; one python3.X lib directory
  fs::create_directories(tree_.dir() / "opt/py/lib/python3.9/site-packages");
  const auto f = collect({{"PATH", "/usr/bin:/opt/py/bin"}});
  ASSERT_EQ(f.interpreters.size(), 2u);
  EXPECT_EQ(f.interpreters[0].version, "3.12");
  EXPECT_EQ(f.interpreters[0].version_source, "file name");
  EXPECT_TRUE(f.interpreters[0].package_dirs.empty());
  EXPECT_EQ(f.interpreters[1].version, "3.9");
  EXPECT_EQ(f.interpreters[1].version_source, "lib dir");
  ASSERT_EQ(f.interpreters[1].package_dirs.size(), 1u);
  EXPECT_EQ(f.interpreters[1].package_dirs[0].path, "/opt/py/lib/python3.9/site-packages");
}

TEST_F(PythonTree, VenvIsItsOwnInterpreterAndSeesSystemPackagesWhenAsked) {
  debian_python();
  link("home/u/env/bin/python", "/usr/bin/python3.11");
  link("home/u/env/bin/python3", "python");
  write("home/u/env/pyvenv.cfg",
        "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  write("home/u/env/lib/python3.11/site-packages/torch/version.py",
        "__version__ = '2.4.0+cu118'\ncuda: Optional[str] = '11.8'\n");
  write("home/u/env/lib/python3.11/site-packages/torch-2.4.0+cu118.dist-info/METADATA",
        "Name: torch\nVersion: 2.4.0+cu118\n"
        "Requires-Dist: nvidia-cudnn-cu11==9.1.0.70; platform_system == \"Linux\"\n"
        "Requires-Dist: nvidia-nccl-cu11==2.20.5; platform_system == \"Linux\"\n");
  write("home/u/env/lib/python3.11/site-packages/nvidia_cudnn_cu11-9.1.0.70.dist-info/RECORD");
  const auto f = collect({{"PATH", "/home/u/env/bin:/usr/bin"}, {"VIRTUAL_ENV", "/home/u/env"}});
  ASSERT_EQ(f.interpreters.size(), 2u);
  const auto* venv = find(f, "/usr/bin/python3.11", "venv");
  ASSERT_NE(venv, nullptr);
  EXPECT_EQ(venv->path, "/home/u/env/bin/python");
  EXPECT_EQ(venv->prefix, "/home/u/env");
  EXPECT_EQ(venv->found_via, (std::vector<std::string>{"PATH", "VIRTUAL_ENV"}));
  EXPECT_EQ(venv->commands, (std::vector<std::string>{"python", "python3"}));
  EXPECT_EQ(venv->version_source, "pyvenv.cfg");
  ASSERT_EQ(venv->package_dirs.size(), 3u);
  EXPECT_EQ(venv->package_dirs[0].path, "/home/u/env/lib/python3.11/site-packages");
  EXPECT_EQ(venv->package_dirs[2].path, "/usr/lib/python3/dist-packages");
  ASSERT_TRUE(venv->torch);  // the venv's own, found first
  EXPECT_EQ(venv->torch->version, "2.4.0+cu118");
  EXPECT_EQ(venv->torch->cuda, "11.8");
  EXPECT_EQ(venv->torch->cuda_build, true);
  EXPECT_EQ(venv->torch->cudnn, "9.1.0.70");
  EXPECT_EQ(venv->torch->nccl, "2.20.5");
  EXPECT_EQ(venv->package_dirs[0].distributions.size(), 2u);
  const auto* sys = find(f, "/usr/bin/python3.11", "PATH");
  ASSERT_NE(sys, nullptr);
  EXPECT_EQ(sys->commands, std::vector<std::string>{"python3.11"});  // python3 is the venv's
  EXPECT_EQ(sys->torch->version, "1.13.0a0");
}

TEST_F(PythonTree, PyenvShimsResolveThroughTheVersionFile) {
  debian_python();
  write("home/u/.pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec \"$program\"\n");
  write("home/u/.pyenv/shims/python3.12", "#!/usr/bin/env bash\n");
  write("home/u/.pyenv/shims/python3.11", "#!/usr/bin/env bash\n");
  write("home/u/.pyenv/version", "# selected by `pyenv global`\n3.11\n");
  write("home/u/.pyenv/versions/3.11.7/bin/python3.11");
  link("home/u/.pyenv/versions/3.11.7/bin/python3", "python3.11");
  write("home/u/.pyenv/versions/3.11.4/bin/python3.11");
  write("home/u/.pyenv/versions/3.10.13/bin/python3.10");
  const Env env = {{"PATH", "/home/u/.pyenv/shims:/usr/bin"}, {"HOME", "/home/u"}};
  auto f = collect(env);
  ASSERT_TRUE(f.pyenv);
  EXPECT_EQ(f.pyenv->root, "/home/u/.pyenv");
  EXPECT_EQ(f.pyenv->selected, std::vector<std::string>{"3.11"});
  EXPECT_EQ(f.pyenv->selected_by, "/home/u/.pyenv/version");
  EXPECT_EQ(f.pyenv->installed,
            (std::vector<std::string>{"3.10.13", "3.11.4", "3.11.7"}));  // numeric order
  const auto* p = find(f, "/home/u/.pyenv/versions/3.11.7/bin/python3.11");
  ASSERT_NE(p, nullptr);  // "3.11" is a prefix: the latest 3.11 installed
  EXPECT_EQ(p->source, "pyenv");
  EXPECT_EQ(p->found_via, std::vector<std::string>{"pyenv shim"});
  EXPECT_EQ(p->commands, (std::vector<std::string>{"python3", "python3.11"}));
  EXPECT_EQ(p->version, "3.11.7");
  EXPECT_EQ(p->version_source, "pyenv");
  EXPECT_EQ(f.interpreters.size(), 2u);  // the python3.12 shim leads nowhere: skipped
  EXPECT_TRUE(find(f, "/usr/bin/python3.11", "PATH")->commands.empty());  // shadowed

  // PYENV_VERSION wins over the file; "system" is the next one on PATH.
  auto env2 = env;
  env2["PYENV_VERSION"] = "system";
  f = collect(env2);
  ASSERT_EQ(f.interpreters.size(), 1u);
  EXPECT_EQ(f.interpreters[0].resolved, "/usr/bin/python3.11");
  EXPECT_EQ(f.interpreters[0].found_via, (std::vector<std::string>{"pyenv shim", "PATH"}));
  EXPECT_EQ(f.interpreters[0].commands, (std::vector<std::string>{"python3", "python3.11"}));
}

TEST_F(PythonTree, GarbledTorchFilesAreProblemsNotCrashes) {
  write("usr/bin/python3.11");
  write("usr/lib/python3.11/site-packages/torch/version.py", "\x01garbage\n__version__ = 2\n");
  write("usr/lib/python3.11/site-packages/torch-2.0.0.dist-info/METADATA",
        "Name: torch\nVersion: 2.0.0\nRequires-Dist: nvidia-cudnn-cu11 (>=8)\n");
  const auto f = collect({{"PATH", "/usr/bin"}});
  ASSERT_EQ(f.interpreters.size(), 1u);
  ASSERT_TRUE(f.interpreters[0].torch);
  const auto& t = *f.interpreters[0].torch;
  EXPECT_EQ(t.version, "2.0.0");     // from the dist-info
  EXPECT_EQ(t.cudnn, std::nullopt);  // not pinned
  EXPECT_EQ(t.cuda_build, std::nullopt);
  ASSERT_EQ(ctx_->problems().size(), 1u);
  EXPECT_EQ(ctx_->problems()[0].path, "/usr/lib/python3.11/site-packages/torch/version.py");
}

TEST_F(PythonTree, NothingThereIsNothingReported) {
  const auto f = collect({});
  EXPECT_TRUE(f.interpreters.empty());
  EXPECT_FALSE(f.pyenv);
  EXPECT_TRUE(ctx_->problems().empty());
  EXPECT_EQ(to_json(f).dump(), R"({"interpreters":[]})");
}

// The hand-made 8-GPU host: a conda env with a CUDA torch, Debian's python3.10 without torch.
TEST(PythonFixture, Gpu8Numa2) {
  auto root = Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2");
  ASSERT_TRUE(root.has_value()) << root.error().message();
  Context ctx(*root, {{"PATH",
                       "/opt/conda/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/"
                       "bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                      {"CONDA_PREFIX", "/opt/conda"},
                      {"CUDA_HOME", "/usr/local/cuda"}});
  const auto f = collect_python(ctx);
  ASSERT_EQ(f.interpreters.size(), 2u);
  const auto& conda = f.interpreters[0];
  EXPECT_EQ(conda.path, "/opt/conda/bin/python");
  EXPECT_EQ(conda.resolved, "/opt/conda/bin/python3.11");
  EXPECT_EQ(conda.source, "conda");
  EXPECT_EQ(conda.found_via, (std::vector<std::string>{"PATH", "CONDA_PREFIX"}));
  EXPECT_EQ(conda.commands, (std::vector<std::string>{"python", "python3", "python3.11"}));
  EXPECT_EQ(conda.version, "3.11.9");
  EXPECT_EQ(conda.version_source, "conda-meta");
  ASSERT_EQ(conda.package_dirs.size(), 1u);
  EXPECT_EQ(conda.package_dirs[0].path, "/opt/conda/lib/python3.11/site-packages");
  ASSERT_TRUE(conda.torch);
  EXPECT_EQ(conda.torch->version, "2.3.1+cu121");
  EXPECT_EQ(conda.torch->cuda, "12.1");
  EXPECT_EQ(conda.torch->cuda_build, true);
  EXPECT_EQ(conda.torch->hip, std::nullopt);
  EXPECT_EQ(conda.torch->cudnn, "8.9.2.26");
  EXPECT_EQ(conda.torch->nccl, "2.20.5");
  EXPECT_EQ(conda.torch->sources, (std::vector<std::string>{"version.py", "dist-info"}));
  const auto& debian = f.interpreters[1];
  EXPECT_EQ(debian.path, "/usr/bin/python3");
  EXPECT_EQ(debian.resolved, "/usr/bin/python3.10");
  EXPECT_EQ(debian.source, "PATH");
  EXPECT_EQ(debian.commands, std::vector<std::string>{"python3.10"});
  EXPECT_EQ(debian.version, "3.10");
  EXPECT_EQ(debian.version_source, "file name");
  ASSERT_EQ(debian.package_dirs.size(), 1u);
  EXPECT_EQ(debian.package_dirs[0].path, "/usr/lib/python3/dist-packages");
  EXPECT_FALSE(debian.torch);
  EXPECT_TRUE(ctx.problems().empty());
}

}  // namespace python_test

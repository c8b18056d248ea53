#include "host/parse/python_files.hpp"

#include <gtest/gtest.h>

namespace python_files_test {

namespace p = dltune::host::parse;
using Kind = p::PyLiteral::Kind;

TEST(PyvenvCfg, ReadsVenvAndVirtualenvFiles) {
  // python3.11 -m venv (Debian 12).
  auto v = p::pyvenv_cfg(
      "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n"
      "executable = /usr/bin/python3.11\ncommand = /usr/bin/python3 -m venv /home/a/env\n");
  EXPECT_EQ(v.home, "/usr/bin");
  EXPECT_EQ(v.version, "3.11.2");
  EXPECT_EQ(v.include_system_site_packages, false);
  // virtualenv 20: version_info with the release level; keys in any case.
  v = p::pyvenv_cfg(
      "home = /opt/py/bin\nimplementation = CPython\n"
      "version_info = 3.10.12.final.0\nvirtualenv = 20.24.1\n"
      "Include-System-Site-Packages = True\nbase-prefix = /opt/py\n");
  EXPECT_EQ(v.version, "3.10.12");
  EXPECT_EQ(v.include_system_site_packages, true);
  // Odd: no '=', a bad value, nothing else.
  v = p::pyvenv_cfg("garbage line\nversion = unknown\ninclude-system-site-packages = maybe\n");
  EXPECT_EQ(v.version, std::nullopt);
  EXPECT_EQ(v.include_system_site_packages, std::nullopt);
  EXPECT_EQ(v.home, std::nullopt);
}

TEST(PythonAssignments, ReadsTorchVersionPyOfDebianAndOfWheels) {
  // /usr/lib/python3/dist-packages/torch/version.py of Debian's python3-torch 1.13.
  auto a = p::python_assignments(
      "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\n"
      "hip = None\n");
  EXPECT_EQ(a.at("__version__").kind, Kind::kString);
  EXPECT_EQ(a.at("__version__").text, "1.13.0a0");
  EXPECT_EQ(a.at("cuda").kind, Kind::kNone);
  EXPECT_EQ(a.at("debug").kind, Kind::kBool);
  EXPECT_FALSE(a.at("debug").flag);
  EXPECT_EQ(a.at("git_version").text, "Unknown");
  // torch 2.3 wheels annotate the optional ones.
  a = p::python_assignments(
      "from typing import Optional\n\n"
      "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
      "__version__ = '2.3.1+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
      "git_version = '63d5e9221bedd1546b7d364b5ce4171547db12a9'\nhip: Optional[str] = None\n");
  EXPECT_EQ(a.at("__version__").text, "2.3.1+cu121");
  EXPECT_EQ(a.at("cuda").kind, Kind::kString);
  EXPECT_EQ(a.at("cuda").text, "12.1");
  EXPECT_EQ(a.at("hip").kind, Kind::kNone);
  EXPECT_EQ(a.at("__all__").kind, Kind::kOther);
  EXPECT_EQ(a.count("from"), 0u);
}

TEST(PythonAssignments, OddQuotingAndLines) {
  const auto a = p::python_assignments(
      "__version__ = \"2.4.0\"  # set by setup.py\n"
      "cuda = '''12.4'''\n"
      "hip = r'6.0\\x'\n"
      "git_version = 'it\\'s'\n"
      "debug = True;\n"
      "    indented = '1'\n"
      "unclosed = 'abc\n"
      "joined = 'a' + 'b'\n"
      "compare == 'x'\n"
      "empty = ''\n"
      "u = u\"x\"\n"
      "name = some_function()\n"
      "__version__ = 'second'\n");
  EXPECT_EQ(a.at("__version__").text, "2.4.0");  // the first assignment wins
  EXPECT_EQ(a.at("cuda").text, "12.4");
  EXPECT_EQ(a.at("hip").text, "6.0\\x");  // raw: the backslash stays
  EXPECT_EQ(a.at("git_version").text, "it's");
  EXPECT_EQ(a.at("debug").kind, Kind::kBool);
  EXPECT_TRUE(a.at("debug").flag);
  EXPECT_EQ(a.count("indented"), 0u);  // not top level
  EXPECT_EQ(a.at("unclosed").kind, Kind::kOther);
  EXPECT_EQ(a.at("joined").kind, Kind::kOther);
  EXPECT_EQ(a.count("compare"), 0u);
  EXPECT_EQ(a.at("empty").kind, Kind::kString);
  EXPECT_EQ(a.at("empty").text, "");
  EXPECT_EQ(a.at("u").text, "x");
  EXPECT_EQ(a.at("name").kind, Kind::kOther);
  EXPECT_TRUE(p::python_assignments("\x01\x02 = \xff'\n=\n: = 3").empty());
}

TEST(Requirement, BothFormsWithMarkersAndExtras) {
  // torch 2.3.1 METADATA (setuptools' older form with parentheses).
  auto r = p::requirement(
      "nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == \"Linux\" and platform_machine == "
      "\"x86_64\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(r->specifier, "==8.9.2.26");
  EXPECT_EQ(r->pinned(), "8.9.2.26");
  EXPECT_EQ(r->marker, "platform_system == \"Linux\" and platform_machine == \"x86_64\"");
  // torch 2.5 METADATA (PEP 508 without parentheses).
  r = p::requirement("nvidia-nccl-cu12==2.21.5; platform_system == \"Linux\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvidia-nccl-cu12");
  EXPECT_EQ(r->pinned(), "2.21.5");
  r = p::requirement("Nvidia_CUDNN.cu12 === 9.1.0.70");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(r->pinned(), "9.1.0.70");
  r = p::requirement("filelock");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->specifier, "");
  EXPECT_EQ(r->pinned(), std::nullopt);
  r = p::requirement("sympy[extra] >=1.0, <2 ; python_version >= \"3.9\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "sympy");
  EXPECT_EQ(r->specifier, ">=1.0,<2");
  EXPECT_EQ(r->pinned(), std::nullopt);
  EXPECT_EQ(p::requirement("x ==1.*")->pinned(), std::nullopt);
  EXPECT_EQ(p::requirement("x (==1.0"), std::nullopt);
  EXPECT_EQ(p::requirement("x [a"), std::nullopt);
  EXPECT_EQ(p::requirement("; marker only"), std::nullopt);
  EXPECT_EQ(p::requirement("x @ https://example.com/x.whl"), std::nullopt);
}

TEST(CoreMetadata, HeadersUntilTheBody) {
  const auto m = p::core_metadata(
      "Metadata-Version: 2.1\r\nName: torch\r\nVersion: 2.3.1+cu121\r\n"
      "Requires-Dist: filelock\r\n"
      "Requires-Dist: nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == \"Linux\"\r\n"
      "Requires-Dist: nvidia-nccl-cu12 ==2.20.5 ;\r\n  platform_system == \"Linux\"\r\n"
      "Requires-Dist: !!garbled\r\n"
      "\r\n"
      "Requires-Dist: in-the-description (==1)\r\nVersion: 9\r\n");
  EXPECT_EQ(m.name, "torch");
  EXPECT_EQ(m.version, "2.3.1+cu121");
  ASSERT_EQ(m.requires_dist.size(), 3u);
  EXPECT_EQ(m.requires_dist[1].pinned(), "8.9.2.26");
  EXPECT_EQ(m.requires_dist[2].name, "nvidia-nccl-cu12");
  EXPECT_EQ(m.requires_dist[2].marker, "platform_system == \"Linux\"");  // folded line
  // Debian's egg-info PKG-INFO.
  const auto e = p::core_metadata(
      "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.0a0+gitunknown\n"
      "Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration\n");
  EXPECT_EQ(e.version, "1.13.0a0+gitunknown");
  EXPECT_TRUE(e.requires_dist.empty());
  EXPECT_EQ(p::core_metadata("").name, std::nullopt);
  EXPECT_EQ(p::core_metadata("no colon here\n").version, std::nullopt);
}

TEST(DistributionDir, NamesAndVersions) {
  auto d = p::distribution_dir("nvidia_cudnn_cu12-9.1.0.70.dist-info");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(d->version, "9.1.0.70");
  EXPECT_FALSE(d->egg_info);
  d = p::distribution_dir("torch-1.13.0a0+gitunknown.egg-info");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "torch");
  EXPECT_EQ(d->version, "1.13.0a0+gitunknown");
  EXPECT_TRUE(d->egg_info);
  d = p::distribution_dir("six-1.16.0-py3.11.egg-info");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->version, "1.16.0");
  d = p::distribution_dir("Foo.Bar.egg-info");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "foo-bar");
  EXPECT_EQ(d->version, "");
  EXPECT_EQ(p::distribution_dir("torch"), std::nullopt);
  EXPECT_EQ(p::distribution_dir("noversion.dist-info"), std::nullopt);
  EXPECT_EQ(p::distribution_dir("-1.0.dist-info"), std::nullopt);
  EXPECT_EQ(p::normalize_name("Foo__Bar.-baz"), "foo-bar-baz");
}

TEST(CondaMeta, OnlyThePackageItself) {
  EXPECT_EQ(p::conda_meta_version("python-3.11.9-h955ad1f_0.json", "python"), "3.11.9");
  EXPECT_EQ(p::conda_meta_version("python-3.12.3-hab00c5b_0_cpython.json", "python"), "3.12.3");
  EXPECT_EQ(p::conda_meta_version("python-dateutil-2.8.2-pyhd3eb1b0_0.json", "python"),
            std::nullopt);
  EXPECT_EQ(p::conda_meta_version("python_abi-3.11-2_cp311.json", "python"), std::nullopt);
  EXPECT_EQ(p::conda_meta_version("python-3.11.9-h955ad1f_0.txt", "python"), std::nullopt);
  EXPECT_EQ(p::conda_meta_version("history", "python"), std::nullopt);
  EXPECT_EQ(p::conda_meta_version("python--h_0.json", "python"), std::nullopt);
}

TEST(PatchLevel, PyVersion) {
  // /usr/include/python3.11/patchlevel.h (Debian 12).
  EXPECT_EQ(p::py_version_define("#define PY_MAJOR_VERSION        3\n"
                                 "#define PY_MINOR_VERSION        11\n"
                                 "/* Version as a string */\n"
                                 "#define PY_VERSION              \"3.11.2\"\n"
                                 "/*--end constants--*/\n"),
            "3.11.2");
  EXPECT_EQ(p::py_version_define("#define PY_VERSION 3.11\n"), std::nullopt);  // not a string
  EXPECT_EQ(p::py_version_define("#define PY_VERSION \"\"\n"), std::nullopt);
  EXPECT_EQ(p::py_version_define(""), std::nullopt);
}

TEST(PyenvVersionFile, NamesAndComments) {
  EXPECT_EQ(p::pyenv_versions("3.11.7\n"), std::vector<std::string>{"3.11.7"});
  EXPECT_EQ(p::pyenv_versions("# pinned\n3.12.1 3.11.7\n\nsystem\n"),
            (std::vector<std::string>{"3.12.1", "3.11.7", "system"}));
  EXPECT_EQ(p::pyenv_versions("3.12:3.11"), (std::vector<std::string>{"3.12", "3.11"}));
  EXPECT_TRUE(p::pyenv_versions("  \n# only a comment\n").empty());
}

TEST(PythonProgram, OnlyInterpreters) {
  EXPECT_EQ(p::python_program_version("python3.11"), "3.11");
  EXPECT_EQ(p::python_program_version("python3"), "3");
  EXPECT_EQ(p::python_program_version("python"), "");
  EXPECT_EQ(p::python_program_version("python2.7"), "2.7");
  for (const char* n : {"python3-config", "python3.11-gdb.py", "python3.6m", "pythonw", "python3.",
                        "python.3", "python3.11.2", "ipython3", "python3-futurize"})
    EXPECT_EQ(p::python_program_version(n), std::nullopt) << n;
}

}  // namespace python_files_test

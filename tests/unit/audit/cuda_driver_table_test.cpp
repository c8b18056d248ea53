// knowledge/cuda-driver.toml as compiled into the binary: it parses, it is complete from CUDA
// 11.0 to 13.0, its minimums rise with the CUDA version, and every row names its source. And the
// parser refuses broken tables with the row named.
#include "audit/cuda_driver_table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cuda_driver_table_test {

using namespace dltune::audit;
using ::testing::HasSubstr;

namespace {

const CudaDriverTable& builtin() {
  const auto& t = builtin_cuda_driver_table();
  EXPECT_TRUE(t.has_value()) << t.error().message();
  static const CudaDriverTable kEmpty;
  return t ? *t : kEmpty;
}

std::string cuda(CudaVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

}  // namespace

TEST(CudaDriverTable, BuiltinIsTheKnowledgeFile) {
  EXPECT_THAT(std::string(builtin_cuda_driver_toml()), HasSubstr("[[toolkit]]"));
  EXPECT_THAT(std::string(builtin_cuda_driver_toml()), HasSubstr("Table 3"));
  EXPECT_TRUE(builtin_cuda_driver_table().has_value());
}

TEST(CudaDriverTable, EveryCudaFrom11_0To13_0IsListed) {
  const auto& t = builtin();
  std::vector<CudaVersion> want;
  for (int m = 0; m <= 8; ++m) want.push_back({11, m});
  for (int m = 0; m <= 9; ++m)
    if (m != 7) want.push_back({12, m});  // NVIDIA never released a CUDA 12.7
  want.push_back({13, 0});
  for (const auto v : want) {
    const auto* row = t.toolkit(v);
    ASSERT_NE(row, nullptr) << "CUDA " << cuda(v) << " missing";
    EXPECT_FALSE(row->driver.empty());
    EXPECT_THAT(row->release, HasSubstr("CUDA " + cuda(v)));
  }
  EXPECT_EQ(t.toolkit({12, 7}), nullptr);
  for (const int major : {11, 12, 13}) EXPECT_NE(t.compat(major), nullptr) << major;
  EXPECT_EQ(t.compat(10), nullptr);
}

TEST(CudaDriverTable, TheValuesOfTable3AndTheCompatibilityGuide) {
  const auto& t = builtin();
  const std::pair<CudaVersion, const char*> kRows[] = {
      {{11, 0}, "450.51.05"}, {{11, 1}, "455.23"},    {{11, 2}, "460.27.03"},
      {{11, 3}, "465.19.01"}, {{11, 4}, "470.42.01"}, {{11, 5}, "495.29.05"},
      {{11, 6}, "510.39.01"}, {{11, 7}, "515.43.04"}, {{11, 8}, "520.61.05"},
      {{12, 0}, "525.60.13"}, {{12, 1}, "530.30.02"}, {{12, 2}, "535.54.03"},
      {{12, 3}, "545.23.06"}, {{12, 4}, "550.54.14"}, {{12, 5}, "555.42.02"},
      {{12, 6}, "560.28.03"}, {{12, 8}, "570.26"},    {{12, 9}, "575.51.03"},
      {{13, 0}, "580.65.06"},
  };
  for (const auto& [v, driver] : kRows) {
    ASSERT_NE(t.toolkit(v), nullptr) << cuda(v);
    EXPECT_EQ(t.toolkit(v)->driver, driver) << cuda(v);
  }
  EXPECT_EQ(t.compat(11)->driver, "450.80.02");
  EXPECT_EQ(t.compat(12)->driver, "525.60.13");
  EXPECT_EQ(t.compat(13)->driver, "580");
}

TEST(CudaDriverTable, MinimumsRiseWithTheCudaVersion) {
  const auto& t = builtin();
  ASSERT_GE(t.toolkits.size(), 19u);
  for (std::size_t i = 1; i < t.toolkits.size(); ++i) {
    const auto& a = t.toolkits[i - 1];
    const auto& b = t.toolkits[i];
    EXPECT_LT(a.cuda, b.cuda) << cuda(a.cuda) << " before " << cuda(b.cuda);
    EXPECT_EQ(compare_driver_versions(a.driver, b.driver), std::strong_ordering::less)
        << cuda(a.cuda) << " " << a.driver << " vs " << cuda(b.cuda) << " " << b.driver;
  }
  // A major's minor-compatibility minimum is never above what its x.1 release asks for, and
  // rises with the major.
  for (const auto& m : t.minor_compat) {
    const auto* x1 = t.toolkit({m.major, 1});
    ASSERT_NE(x1, nullptr) << m.major;
    EXPECT_NE(compare_driver_versions(m.driver, x1->driver), std::strong_ordering::greater);
  }
  for (std::size_t i = 1; i < t.minor_compat.size(); ++i)
    EXPECT_EQ(compare_driver_versions(t.minor_compat[i - 1].driver, t.minor_compat[i].driver),
              std::strong_ordering::less);
}

TEST(CudaDriverTable, EveryRowHasItsSource) {
  const auto& t = builtin();
  for (const auto& k : t.toolkits) {
    EXPECT_THAT(k.source, HasSubstr("Release Notes, Table 3")) << cuda(k.cuda);
    EXPECT_THAT(k.source, HasSubstr("https://docs.nvidia.com/")) << cuda(k.cuda);
  }
  for (const auto& m : t.minor_compat)
    EXPECT_THAT(m.source, HasSubstr("CUDA Compatibility")) << m.major;
}

TEST(CudaDriverTable, DriverVersionsCompareNumberByNumber) {
  using std::strong_ordering;
  EXPECT_EQ(compare_driver_versions("535.161.07", "535.54.03"), strong_ordering::greater);
  EXPECT_EQ(compare_driver_versions("580", "580.65.06"), strong_ordering::less);
  EXPECT_EQ(compare_driver_versions("580.65.06", "580"), strong_ordering::greater);
  EXPECT_EQ(compare_driver_versions("455.23", "455.23.0"), strong_ordering::equal);
  EXPECT_EQ(compare_driver_versions(" 470.82.01\n", "470.82.01"), strong_ordering::equal);
  EXPECT_EQ(compare_driver_versions("470.x", "470"), std::nullopt);
  EXPECT_EQ(compare_driver_versions("", "470"), std::nullopt);
  EXPECT_EQ(compare_driver_versions("470..1", "470"), std::nullopt);
  EXPECT_EQ(compare_driver_versions("-1", "470"), std::nullopt);
}

TEST(CudaDriverTable, CudaVersionsParse) {
  EXPECT_EQ(parse_cuda_version("12.1"), (CudaVersion{12, 1}));
  EXPECT_EQ(parse_cuda_version("11.8.89"), (CudaVersion{11, 8}));
  EXPECT_EQ(parse_cuda_version(" 12.4\n"), (CudaVersion{12, 4}));
  EXPECT_EQ(parse_cuda_version("12"), std::nullopt);
  EXPECT_EQ(parse_cuda_version("None"), std::nullopt);
  EXPECT_EQ(parse_cuda_version("12.1.2.3"), std::nullopt);
  EXPECT_EQ(parse_cuda_version("1200.1"), std::nullopt);
}

TEST(CudaDriverTable, BrokenTablesAreRefusedWithTheRowNamed) {
  const std::string compat =
      "[[minor_compat]]\nmajor = 12\ndriver = \"525.60.13\"\nsource = \"guide\"\n";
  auto row = [](const char* cuda, const char* driver, const char* source) {
    return std::string("[[toolkit]]\ncuda = \"") + cuda + "\"\nrelease = \"CUDA " + cuda +
           " GA\"\ndriver = \"" + driver + "\"\nsource = \"" + source + "\"\n";
  };
  // Good.
  const auto good = parse_cuda_driver_table(compat + row("12.0", "525.60.13", "notes") +
                                            row("12.1", "530.30.02", "notes"));
  ASSERT_TRUE(good.has_value()) << good.error().message();
  EXPECT_EQ(good->toolkits.size(), 2u);
  EXPECT_EQ(good->toolkits[1].updates, "");

  const auto syntax = parse_cuda_driver_table(compat + "[[toolkit]\ncuda = 1\n");
  ASSERT_FALSE(syntax.has_value());
  EXPECT_THAT(syntax.error().message(), HasSubstr("line 5"));

  const auto no_source = parse_cuda_driver_table(compat + row("12.0", "525.60.13", "") +
                                                 row("12.1", "530.30.02", "notes"));
  ASSERT_FALSE(no_source.has_value());
  EXPECT_THAT(no_source.error().message(), HasSubstr("'source'"));
  EXPECT_THAT(no_source.error().message(), HasSubstr("[[toolkit]] #1"));

  const auto backwards = parse_cuda_driver_table(compat + row("12.1", "530.30.02", "n") +
                                                 row("12.0", "525.60.13", "n"));
  ASSERT_FALSE(backwards.has_value());
  EXPECT_THAT(backwards.error().message(), HasSubstr("[[toolkit]] #2"));

  const auto lower_driver = parse_cuda_driver_table(compat + row("12.0", "530.30.02", "n") +
                                                    row("12.1", "525.60.13", "n"));
  ASSERT_FALSE(lower_driver.has_value());
  EXPECT_THAT(lower_driver.error().message(), HasSubstr("must not decrease"));

  const auto bad_driver = parse_cuda_driver_table(compat + row("12.0", "525.x", "n"));
  ASSERT_FALSE(bad_driver.has_value());
  EXPECT_THAT(bad_driver.error().message(), HasSubstr("'525.x' is not a driver version"));

  const auto bad_cuda = parse_cuda_driver_table(compat + row("12.0.1", "525.60.13", "n"));
  ASSERT_FALSE(bad_cuda.has_value());
  EXPECT_THAT(bad_cuda.error().message(), HasSubstr("not a CUDA version"));

  const auto no_arrays = parse_cuda_driver_table("title = 'x'\n");
  ASSERT_FALSE(no_arrays.has_value());
}

}  // namespace cuda_driver_table_test

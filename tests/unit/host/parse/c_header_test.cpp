#include "host/parse/c_header.hpp"

#include <gtest/gtest.h>

namespace c_header_test {

using dltune::host::parse::c_defines;

TEST(CDefines, ReadsObjectLikeMacrosWithTheirLines) {
  // From cudnn_version.h (cuDNN 9.19) and patchlevel.h (Python 3.11).
  const auto d = c_defines(
      "/* Copyright */\n"
      "#ifndef CUDNN_VERSION_H_\n"
      "#define CUDNN_VERSION_H_\n"
      "#define CUDNN_MAJOR 9\n"
      "#define CUDNN_MINOR 19  // minor\n"
      "#  define CUDNN_PATCHLEVEL\t0 /* patch */\n"
      "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
      "#define PY_VERSION              \"3.11.2\"\n");
  EXPECT_EQ(d.at("CUDNN_MAJOR").value, "9");
  EXPECT_EQ(d.at("CUDNN_MAJOR").line, 4);
  EXPECT_EQ(d.at("CUDNN_MINOR").value, "19");
  EXPECT_EQ(d.at("CUDNN_PATCHLEVEL").value, "0");
  EXPECT_EQ(d.at("CUDNN_VERSION").value,
            "(CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)");
  EXPECT_EQ(d.at("CUDNN_VERSION_H_").value, "");
  EXPECT_EQ(d.at("PY_VERSION").value, "\"3.11.2\"");
}

TEST(CDefines, SkipsFunctionLikeContinuedAndCommentedOutLines) {
  const auto d = c_defines(
      "#define NCCL_VERSION(X,Y,Z) ((X) * 10000 + (Y) * 100 + (Z))\n"
      "#define LONG \\\n"
      "  12345\n"
      "#define NOT_A_VALUE_ON_THIS_LINE \\\n"
      "#define HIDDEN 1\n"  // the continuation of the line above, not a define
      "// #define COMMENTED 2\n"
      "#define FIRST 1\n"
      "#define FIRST 2\n"
      "#defineX 3\n"
      "#define 9BAD 4\n"
      "#define STR \"a // not a comment\" // a comment\n"
      "#define CUT /* never closed\n"
      "#define TRAILING 7");  // a prefix cut mid-file: no final newline
  EXPECT_EQ(d.count("NCCL_VERSION"), 0u);
  EXPECT_EQ(d.count("LONG"), 0u);
  EXPECT_EQ(d.count("HIDDEN"), 0u);
  EXPECT_EQ(d.count("COMMENTED"), 0u);
  EXPECT_EQ(d.at("FIRST").value, "1");
  EXPECT_EQ(d.count("9BAD"), 0u);
  EXPECT_EQ(d.at("STR").value, "\"a // not a comment\"");
  EXPECT_EQ(d.at("CUT").value, "");
  EXPECT_EQ(d.at("TRAILING").value, "7");
}

TEST(CDefines, GarbageGivesNothingAndNoCrash) {
  EXPECT_TRUE(c_defines("").empty());
  EXPECT_TRUE(c_defines(std::string("\0\0#define\n#\n#define \n", 21)).empty());
  EXPECT_TRUE(c_defines("\xff\xfe binary \x01\x02").empty());
}

}  // namespace c_header_test

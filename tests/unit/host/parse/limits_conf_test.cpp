#include "host/parse/limits_conf.hpp"

#include <gtest/gtest.h>

namespace limits_conf_test {

using dltune::host::parse::limits_conf;

TEST(LimitsConf, FieldsCommentsAndOddLines) {
  const std::string text =
      "#<domain>      <type>  <item>         <value>\n"
      "*               soft    core            0\n"
      "@student        HARD    NProc           20 # classes\n"
      "   ftp\t-\tmemlock unlimited\n"
      "@faculty soft nproc\n"               // three words: pam_limits skips it
      "1000:  hard nofile 8192 trailing\n"  // a fifth word is not read
      "\n"
      "# End of file";
  const auto e = limits_conf(text);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].domain, "*");
  EXPECT_EQ(e[0].type, "soft");
  EXPECT_EQ(e[0].item, "core");
  EXPECT_EQ(e[0].value, "0");
  EXPECT_EQ(e[0].line, 2);
  EXPECT_EQ(e[1].domain, "@student");
  EXPECT_EQ(e[1].type, "hard");  // lowercased, as pam_limits does
  EXPECT_EQ(e[1].item, "nproc");
  EXPECT_EQ(e[1].value, "20");
  EXPECT_EQ(e[2].domain, "ftp");
  EXPECT_EQ(e[2].type, "-");
  EXPECT_EQ(e[2].value, "unlimited");
  EXPECT_EQ(e[3].domain, "1000:");
  EXPECT_EQ(e[3].value, "8192");
  EXPECT_EQ(e[3].line, 6);
  for (const auto& x : e)
    EXPECT_EQ(text.substr(x.value_begin, x.value_end - x.value_begin), x.value);
}

TEST(LimitsConf, EmptyAndGarbage) {
  EXPECT_TRUE(limits_conf("").empty());
  EXPECT_TRUE(limits_conf("#only\n\n   \n# * soft nofile 1\n").empty());
  EXPECT_TRUE(limits_conf("* soft#nofile 1\n").empty());  // the comment cuts it to two words
}

}  // namespace limits_conf_test

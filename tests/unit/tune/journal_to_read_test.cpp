// The journal status and history read: a missing state directory is said and reads as nothing
// applied; a file where the directory should be is an error naming it.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/temp_tree.hpp"
#include "tune/request.hpp"

namespace journal_to_read_test {

TEST(JournalToRead, AMissingDirectoryIsSaidAndReadsAsNothingApplied) {
  const dltune::testing::TempTree tree;
  const std::string tmpl = tree.dir().string();
  const std::string missing = tmpl + "/state";
  std::string said;
  auto journal = dltune::tune::journal_to_read(missing, [&](const std::string& n) { said += n; });
  ASSERT_TRUE(journal) << journal.error().message();
  EXPECT_THAT(said, ::testing::HasSubstr("no journal in " + missing + " yet"));
  auto history = (*journal)->history();
  ASSERT_TRUE(history) << history.error().message();
  EXPECT_TRUE(history->empty());
  EXPECT_NE(::access(missing.c_str(), F_OK), 0) << "reading creates nothing";

  const std::string file = tmpl + "/file";
  std::ofstream(file) << "x";
  said.clear();
  auto bad = dltune::tune::journal_to_read(file, [&](const std::string& n) { said += n; });
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), ::testing::HasSubstr(file));
  EXPECT_TRUE(said.empty());
}

}  // namespace journal_to_read_test

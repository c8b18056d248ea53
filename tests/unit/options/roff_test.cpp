// The man pages' roff: every character groff would read as markup is escaped, and the help
// texts' layout (filled paragraphs, kept blocks, "name   text" lists) maps to man macros.
#include "options/roff.hpp"
#include "core/json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace roff_test {

using dltune::options::roff::blocks;
using dltune::options::roff::escape;
using dltune::options::roff::Layout;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Roff, EscapesBackslashesHyphensQuotesAndALeadingDot) {
  EXPECT_EQ(escape("--root DIR"), "\\-\\-root DIR");
  EXPECT_EQ(escape("C:\\path"), "C:\\epath");
  EXPECT_EQ(escape("it's `x` \"y\" ~ ^"), "it\\(aqs \\(gax\\(ga \\(dqy\\(dq \\(ti \\(ha");
  // A line that starts with "." or "'" would be a request.
  EXPECT_EQ(escape(".series[].id"), "\\&.series[].id");
  EXPECT_EQ(escape("a\n.b"), "a\n\\&.b");
  EXPECT_EQ(escape("'quoted'"), "\\(aqquoted\\(aq");
  EXPECT_EQ(escape("a.b"), "a.b");
}

TEST(Roff, AParagraphAtColumnZeroIsFilled) {
  EXPECT_EQ(blocks("One line\nand the next.\n\nA second paragraph."),
            ".PP\nOne line\nand the next.\n.PP\nA second paragraph.\n");
}

TEST(Roff, AnIndentedBlockIsKeptLineForLine) {
  EXPECT_EQ(blocks("Try:\n  dltune check -p training\n    --json | jq .\n"),
            ".PP\nTry:\n.PP\n.RS 4\n.nf\ndltune check \\-p training\n  \\-\\-json | jq .\n.fi\n"
            ".RE\n");
}

TEST(Roff, NameAndTextItemsWhoseTextLinesUpAreADefinitionList) {
  const auto roff = blocks(
      "  health   Judge this node,\n"
      "           drain it.\n"
      "  task-prolog\n"
      "           Print the exports.\n");
  EXPECT_EQ(roff,
            ".TP\n\\fBhealth\\fR\nJudge this node,\ndrain it.\n"
            ".TP\n\\fBtask\\-prolog\\fR\nPrint the exports.\n");
  // Commands with comments that line up are examples, kept as they are.
  const auto examples = blocks(
      "  dltune doctor              # the last day\n"
      "  dltune doctor --boot --json  # since boot\n",
      Layout::kExamples);
  EXPECT_THAT(examples, HasSubstr(".nf\n"));
  EXPECT_THAT(examples, Not(HasSubstr(".TP")));
  // Lines that do not line up are not a list.
  EXPECT_THAT(blocks("  a   one\n        two\n"), HasSubstr(".nf\n"));
}

}  // namespace roff_test

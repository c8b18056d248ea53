// A PID a user names for `stacks`: no such process and a process that is not Python are bad input.
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pystack/sample_run.hpp"

namespace attach_named_test {

using ::testing::HasSubstr;

TEST(AttachNamed, NoSuchProcessAndNotPythonAreBadInput) {
  // A PID that ran and is gone: a child, reaped.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  auto gone = dltune::pystack::attach_named(dltune::host::Root(), child);
  ASSERT_FALSE(gone);
  EXPECT_TRUE(gone.error().bad_input);
  EXPECT_THAT(gone.error().error.message(),
              HasSubstr("--pid " + std::to_string(child) + ": no such process"));
  // This test program runs no Python interpreter.
  auto self = dltune::pystack::attach_named(dltune::host::Root(), ::getpid());
  ASSERT_FALSE(self);
  EXPECT_TRUE(self.error().bad_input);
  EXPECT_THAT(self.error().error.message(), HasSubstr(dltune::pystack::kNotPython));
}

}  // namespace attach_named_test

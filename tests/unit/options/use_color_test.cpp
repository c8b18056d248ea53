// --color auto: a terminal, and NO_COLOR unset or empty (no-color.org).
#include <pty.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "options/options.hpp"

namespace use_color_test {

TEST(UseColor, AlwaysNeverAndAutoOnATerminalUnlessNoColor) {
  EXPECT_TRUE(dltune::options::use_color("always"));
  EXPECT_FALSE(dltune::options::use_color("never"));
  // Standard output on a pseudo-terminal for the auto cases, put back after.
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(slave, STDOUT_FILENO), STDOUT_FILENO);
  const char* old = std::getenv("NO_COLOR");
  const std::string old_value = old != nullptr ? old : "";
  ::unsetenv("NO_COLOR");
  const bool unset = dltune::options::use_color("auto");
  ::setenv("NO_COLOR", "", 1);
  const bool empty = dltune::options::use_color("auto");
  ::setenv("NO_COLOR", "1", 1);
  const bool set = dltune::options::use_color("auto");
  const bool always = dltune::options::use_color("always");
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(slave);
  ::close(master);
  if (old != nullptr)
    ::setenv("NO_COLOR", old_value.c_str(), 1);
  else
    ::unsetenv("NO_COLOR");
  EXPECT_TRUE(unset);
  EXPECT_TRUE(empty) << "an empty NO_COLOR is no request";
  EXPECT_FALSE(set);
  EXPECT_TRUE(always);
  // Not a terminal (a pipe here, or a file): no colour.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const int saved2 = ::dup(STDOUT_FILENO);
  ::dup2(pipe_fds[1], STDOUT_FILENO);
  ::unsetenv("NO_COLOR");
  const bool piped = dltune::options::use_color("auto");
  ::dup2(saved2, STDOUT_FILENO);
  ::close(saved2);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  if (old != nullptr) ::setenv("NO_COLOR", old_value.c_str(), 1);
  EXPECT_FALSE(piped);
}

}  // namespace use_color_test

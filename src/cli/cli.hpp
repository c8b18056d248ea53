#pragma once
// The command line: CLI11 wiring, one file per command, no logic of its own.
namespace dltune::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command ran and failed
inline constexpr int kExitBadInput = 2;  // bad arguments or a bad --root: nothing was done

int run(int argc, char** argv);

}  // namespace dltune::cli

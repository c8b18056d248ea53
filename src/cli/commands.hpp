#pragma once
// Each command is a small object: CLI11 options bound to its fields, and execute().
#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace dltune::cli {

struct GlobalOptions {};

class Command {
 public:
  virtual ~Command() = default;
  [[nodiscard]] virtual bool selected() const = 0;
  virtual int execute() = 0;
};

std::unique_ptr<Command> make_env_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_capture_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_check_command(CLI::App& app, GlobalOptions& global);

}  // namespace dltune::cli

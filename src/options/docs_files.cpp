#include "options/docs_files.hpp"

#include <filesystem>
#include <ostream>
#include <system_error>

#include <CLI/CLI.hpp>

#include "core/local_file.hpp"

namespace dltune::options {

namespace {

Result<void> write_whole(const std::string& path, const std::string& text) {
  auto written = local_file::write(
      path, true, [&](std::ostream& out) { out << text; }, path);
  if (!written) return tl::unexpected(written.error());
  return {};
}

Result<void> make_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return fail("cannot make the directory", path, ec.value());
  return {};
}

}  // namespace

Result<void> write_docs(const CLI::App& program, const ManExtras& extras,
                        const CompletionWords& words, const std::string& dir) {
  const std::string man1 = dir + "/man/man1";
  const std::string completions = dir + "/completions";
  for (const auto& d : {man1, completions})
    if (auto ok = make_directory(d); !ok) return ok;
  for (const auto& page : man_pages(program, extras))
    if (auto ok = write_whole(man1 + "/" + page.name + ".1", page.text); !ok) return ok;
  const auto model = completion_model(program);
  for (const auto& [file, text] : {std::pair{"/dltune.bash", bash_completion(model, words)},
                                   {"/_dltune", zsh_completion(model, words)},
                                   {"/dltune.fish", fish_completion(model, words)}})
    if (auto ok = write_whole(completions + file, text); !ok) return ok;
  return {};
}

std::vector<std::string> commands_taking(const CLI::App& program, const std::string& type_name) {
  const auto takes = [&](const CLI::App& app, const auto& self) -> bool {
    for (const auto* o : app.get_options())
      if (o->get_type_name() == type_name) return true;
    for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
      if (self(*s, self)) return true;
    return false;
  };
  std::vector<std::string> out;
  for (const auto* c : program.get_subcommands([](const CLI::App*) { return true; }))
    if (takes(*c, takes)) out.push_back(c->get_name());
  return out;
}

}  // namespace dltune::options

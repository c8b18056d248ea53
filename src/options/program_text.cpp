#include "options/program_text.hpp"

#include <stdexcept>

#include <fmt/core.h>
#include <toml++/toml.h>

#include "core/toml_parse.hpp"

#include "options/docs_files.hpp"

namespace dltune::options {

namespace {

Result<std::string> text_of(const toml::node* node, std::string_view origin,
                            const std::string& key) {
  const auto* s = node != nullptr ? node->as_string() : nullptr;
  if (s == nullptr || s->get().empty())
    return fail(fmt::format("{}: {}: expected a text", origin, key));
  // A multi-line literal starts with a newline after its ''' for readability.
  const auto& v = s->get();
  return v.front() == '\n' ? v.substr(1) : v;
}

Result<std::vector<ProgramEntry>> entries_of(const toml::node& node, std::string_view origin,
                                             const std::string& key) {
  const auto* array = node.as_array();
  if (array == nullptr)
    return fail(fmt::format("{}: {}: expected [[{}]] tables", origin, key, key));
  std::vector<ProgramEntry> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto* t = array->get(i)->as_table();
    const auto where = fmt::format("{}[{}]", key, i);
    if (t == nullptr) return fail(fmt::format("{}: {}: expected a table", origin, where));
    ProgramEntry e;
    for (const auto& [k, v] : *t) {
      const std::string field(k.str());
      if (field == "name" || field == "text" || field == "commands_taking") {
        auto s = text_of(&v, origin, where + "." + field);
        if (!s) return tl::unexpected(s.error());
        (field == "name" ? e.entry.name : field == "text" ? e.entry.text : e.commands_taking) = *s;
      } else if (field == "commands" && v.is_array()) {
        for (const auto& c : *v.as_array()) {
          if (!c.is_string())
            return fail(fmt::format("{}: {}.commands: expected command names", origin, where));
          e.entry.commands.push_back(c.as_string()->get());
        }
      } else {
        return fail(fmt::format("{}: {}.{}: not a field (name, text, commands, commands_taking)",
                                origin, where, field));
      }
    }
    if (e.entry.name.empty() || e.entry.text.empty())
      return fail(fmt::format("{}: {}: expected a name and a text", origin, where));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

ManExtras ProgramText::man_extras(const CLI::App& program, std::string source) const {
  ManExtras extras;
  extras.source = std::move(source);
  extras.exit_status = exit_status;
  const auto resolved = [&](const ProgramEntry& e) {
    ManEntry entry = e.entry;
    if (!e.commands_taking.empty()) entry.commands = commands_taking(program, e.commands_taking);
    return entry;
  };
  for (const auto& e : files) extras.files.push_back(resolved(e));
  for (const auto& e : environment) extras.environment.push_back(resolved(e));
  return extras;
}

Result<ProgramText> parse_program_text(std::string_view toml_text, std::string_view origin) {
  auto parsed = parse_toml(toml_text, origin);
  if (!parsed) return tl::unexpected(parsed.error());
  const toml::table& t = *parsed;
  ProgramText out;
  for (const auto& [key, node] : t) {
    const std::string k(key.str());
    if (k == "description" || k == "exit_status") {
      auto s = text_of(&node, origin, k);
      if (!s) return tl::unexpected(s.error());
      (k == "description" ? out.description : out.exit_status) = *s;
    } else if (k == "files" || k == "environment") {
      auto entries = entries_of(node, origin, k);
      if (!entries) return tl::unexpected(entries.error());
      (k == "files" ? out.files : out.environment) = std::move(*entries);
    } else {
      return fail(fmt::format("{}: {}: not a key (description, exit_status, files, environment)",
                              origin, k));
    }
  }
  if (out.description.empty() || out.exit_status.empty())
    return fail(fmt::format("{}: expected a description and an exit_status", origin));
  return out;
}

const ProgramText& program_text() {
  static const ProgramText text = [] {
    auto parsed = parse_program_text(program_toml(), "commands/program/dltune.toml");
    if (!parsed) throw std::logic_error(parsed.error().message());
    return std::move(*parsed);
  }();
  return text;
}

}  // namespace dltune::options

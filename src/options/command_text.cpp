#include "options/command_text.hpp"

#include <fmt/core.h>

#include <toml++/toml.h>

namespace dltune::options {

namespace {

// A TOML multi-line string starts on the line after its opening quotes and ends with the line
// before its closing ones: drop that last newline.
std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// [options]: "--name" = "help" or "--name" = { value = "V", help = "help" }.
Result<std::map<std::string, OptionText>> parse_options(const toml::node& node,
                                                        std::string_view origin) {
  const auto* table = node.as_table();
  if (table == nullptr) return fail(fmt::format("{}: options is not a table", origin));
  std::map<std::string, OptionText> out;
  for (const auto& [key, entry] : *table) {
    const std::string name(key.str());
    const auto where = fmt::format("{}: options.\"{}\"", origin, name);
    OptionText o;
    if (const auto* s = entry.as_string()) {
      o.help = trimmed(s->get());
    } else if (const auto* t = entry.as_table()) {
      for (const auto& [k, v] : *t) {
        const auto* s = v.as_string();
        if (s == nullptr) return fail(fmt::format("{}: {} is not a string", where, k.str()));
        if (k.str() == "help")
          o.help = trimmed(s->get());
        else if (k.str() == "value")
          o.value = s->get();
        else
          return fail(fmt::format("{}: unknown key {} (expected value, help)", where, k.str()));
      }
    } else {
      return fail(fmt::format("{}: expected a string or {{ value = ..., help = ... }}", where));
    }
    if (o.help.empty()) return fail(fmt::format("{}: help is missing", where));
    if (o.value && o.value->empty()) return fail(fmt::format("{}: value is empty", where));
    out.emplace(name, std::move(o));
  }
  return out;
}

}  // namespace

std::string CommandText::help() const {
  std::string out = description;
  if (environment) out += "\n\nEnvironment: " + *environment;
  if (examples) out += "\n\nExamples:\n" + *examples;
  out += "\n\nExit status: " + exit_status;
  return out;
}

Result<CommandText> parse_command_text(std::string_view toml_text, std::string_view origin) {
  toml::table t;
  try {
    t = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    return fail(fmt::format("{}:{}:{}: {}", origin, e.source().begin.line, e.source().begin.column,
                            e.description()));
  }
  CommandText out;
  for (const auto& [key, node] : t) {
    const std::string k(key.str());
    if (k == "options") {
      auto options = parse_options(node, origin);
      if (!options) return tl::unexpected(options.error());
      out.options = std::move(*options);
      continue;
    }
    if (k == "subcommands") {
      const auto* table = node.as_table();
      if (table == nullptr) return fail(fmt::format("{}: subcommands is not a table", origin));
      for (const auto& [name, summary] : *table) {
        const auto* text = summary.as_string();
        if (text == nullptr || text->get().empty() || text->get().find('\n') != std::string::npos)
          return fail(
              fmt::format("{}: subcommands.{}: expected a one-line summary", origin, name.str()));
        out.subcommands.emplace(std::string(name.str()), text->get());
      }
      continue;
    }
    const auto* s = node.as_string();
    if (s == nullptr) return fail(fmt::format("{}: {} is not a string", origin, k));
    std::string v = trimmed(s->get());
    if (k == "summary")
      out.summary = std::move(v);
    else if (k == "description")
      out.description = std::move(v);
    else if (k == "environment")
      out.environment = std::move(v);
    else if (k == "examples")
      out.examples = std::move(v);
    else if (k == "exit_status")
      out.exit_status = std::move(v);
    else
      return fail(
          fmt::format("{}: unknown key {} (expected summary, description, environment, "
                      "examples, exit_status, [options], [subcommands])",
                      origin, k));
  }
  for (const auto& [k, v] : {std::pair<const char*, const std::string*>{"summary", &out.summary},
                             {"description", &out.description},
                             {"exit_status", &out.exit_status}})
    if (v->empty()) return fail(fmt::format("{}: {} is missing", origin, k));
  if (out.summary.find('\n') != std::string::npos)
    return fail(fmt::format("{}: summary must be one line", origin));
  return out;
}

Result<CommandText> command_text(std::string_view name) {
  const std::string origin = "commands/" + std::string(name) + ".toml";
  for (const auto& f : embedded_commands())
    if (f.name == name) return parse_command_text(f.text, origin);
  return fail("not compiled in", origin);
}

}  // namespace dltune::options

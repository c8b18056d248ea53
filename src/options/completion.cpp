#include "options/completion.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <fmt/core.h>

#include "core/text.hpp"
#include "options/command_text.hpp"

namespace dltune::options {

namespace {

// The help without its parenthetical remarks, up to its first sentence's end or "; ", at most
// about 70 characters: a shell's one-line description.
std::string short_help(const std::string& help) {
  std::string s;
  int depth = 0;
  for (const char c : help.substr(0, help.find('\n'))) {
    if (c == '(') {
      if (depth++ == 0 && !s.empty() && s.back() == ' ') s.pop_back();
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      s += c;
    }
  }
  for (std::size_t at = s.find(". "); at != std::string::npos; at = s.find(". ", at + 1))
    if (at < 3 || (s.compare(at - 3, 3, "e.g") != 0 && s.compare(at - 3, 3, "i.e") != 0)) {
      s.resize(at);
      break;
    }
  if (const auto at = s.find("; "); at != std::string::npos) s.resize(at);
  const auto strip = [](std::string& t) {
    while (!t.empty() && (t.back() == '.' || t.back() == ':' || t.back() == ',' || t.back() == ' '))
      t.pop_back();
  };
  strip(s);
  if (s.size() > 72) {
    const auto space = s.rfind(' ', 68);
    s.resize(space == std::string::npos ? 68 : space);
    strip(s);
    s += "...";
  }
  return s;
}

bool is_word(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 ||
           std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// What a value completes to, from its placeholder (commands/NAME.toml's `value`, or the choices
// CLI11 was given: "auto|always|never") and, for files, what its help says it holds.
ValueKind kind_of(const std::string& name, const std::string& placeholder, const std::string& help,
                  std::vector<std::string>& words) {
  if (contains(placeholder, "|")) {
    // A closed set; "auto|N" offers its words only.
    for (const auto part : text::split(placeholder, '|'))
      if (is_word(part)) words.emplace_back(part);
    return words.empty() ? ValueKind::kAny : ValueKind::kWords;
  }
  if (name == "--gpus") return ValueKind::kGpu;
  if (name == "--cgroup") return ValueKind::kAny;  // a cgroup's path, not a file's
  if (placeholder == "PROFILE") return ValueKind::kProfile;
  if (placeholder == "ID") return ValueKind::kSettingId;
  const bool path = placeholder == "FILE" || placeholder == "PATH" || placeholder == "RECORDING";
  if (placeholder == "RECORDING" || name == "--record" || name == "--recording" ||
      name == "--replay" || (path && (contains(help, "recording") || contains(help, ".db"))))
    return ValueKind::kRecording;
  if (placeholder == "DIR") return ValueKind::kDirectory;
  if (path) return ValueKind::kFile;
  return ValueKind::kAny;
}

void add(const CLI::App& app, const std::string& path, const std::string& summary,
         std::vector<CompletedCommand>& out) {
  CompletedCommand c;
  c.path = path;
  c.summary = summary;
  for (const auto* o : app.get_options()) {
    if (o->get_positional()) {
      if (!c.positional) c.positional = completed_option(*o);
    } else {
      c.options.push_back(completed_option(*o));
    }
  }
  c.job_command = app.get_prefix_command();
  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  for (const auto* s : subs) c.subcommands.push_back(s->get_name());
  out.push_back(std::move(c));
  for (const auto* s : subs) {
    std::string sub_summary = s->get_description();
    if (path.empty()) {
      // A command's own description is its whole help; its summary is in its file.
      const auto text = command_text(s->get_name());
      if (!text) throw std::logic_error(text.error().message());
      sub_summary = text->summary;
    }
    add(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), short_help(sub_summary),
        out);
  }
}

}  // namespace

CompletedOption completed_option(const CLI::Option& o) {
  CompletedOption c;
  for (const auto& s : o.get_snames()) c.names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) c.names.push_back("--" + l);
  c.help = short_help(o.get_description());
  if (!o.get_positional() && o.get_expected_max() == 0) return c;  // a flag: CLI11 expects none
  c.placeholder = o.get_type_name();
  c.list = o.get_delimiter() == ',';
  c.repeatable = o.get_expected_max() > 1;
  const std::string name = !o.get_lnames().empty() ? "--" + o.get_lnames().front() : o.get_name();
  c.kind = kind_of(name, c.placeholder, o.get_description(), c.words);
  return c;
}

std::vector<CompletedCommand> completion_model(const CLI::App& program) {
  std::vector<CompletedCommand> out;
  add(program, "", "", out);
  CompletedCommand help;
  help.path = "help";
  help.summary = "The help of dltune or of a command";
  help.subcommands = out.front().subcommands;
  out.front().subcommands.push_back("help");
  out.push_back(std::move(help));
  return out;
}

const CompletedCommand* find_completed(const std::vector<CompletedCommand>& model,
                                       const std::string& path) {
  for (const auto& c : model)
    if (c.path == path) return &c;
  return nullptr;
}

const std::vector<std::string>& completion_shells() {
  static const std::vector<std::string> shells{"bash", "zsh", "fish"};
  return shells;
}

Result<std::string> completion_script(std::string_view shell, const CLI::App& program,
                                      const CompletionWords& words) {
  const auto model = completion_model(program);
  if (shell == "bash") return bash_completion(model, words);
  if (shell == "zsh") return zsh_completion(model, words);
  if (shell == "fish") return fish_completion(model, words);
  return fail(fmt::format("no completion for {} (bash, zsh or fish)", shell));
}

}  // namespace dltune::options

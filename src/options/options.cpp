#include "options/options.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <fmt/core.h>

#include "core/text.hpp"
#include "options/command_text.hpp"

namespace dltune::options {

namespace {

// Each command's line in the program's help.
std::map<const CLI::App*, std::string>& summaries() {
  static std::map<const CLI::App*, std::string> s;
  return s;
}

[[noreturn]] void refuse(const std::string& name, const std::string& value,
                         const std::string& why) {
  throw CLI::ValidationError(fmt::format("{} {}: {}", long_name(name), value, why));
}

// The help of option `name`, and the placeholder: the entry's value, else `type`.
std::pair<std::string, std::string> help_and_type(const CLI::App& app, const std::string& name,
                                                  const std::string& type) {
  auto t = option_text(app, name);
  return {std::move(t.help), t.value.value_or(type)};
}

CLI::Option* duration_option(CLI::App& app, const std::string& name, std::int64_t min_ns,
                             std::int64_t max_ns, std::function<void(std::int64_t)> set) {
  const auto [help, type] = help_and_type(app, name, "DURATION");
  return app
      .add_option_function<std::string>(
          name,
          [=](const std::string& s) {
            const auto ns = text::duration_within(s, min_ns, max_ns);
            if (!ns) refuse(name, s, ns.error().message());
            set(*ns);
          },
          fmt::format("{} ({} to {})", help, text::format_duration_ns(min_ns),
                      text::format_duration_ns(max_ns)))
      ->type_name(type);
}

CLI::Option* integer_option(CLI::App& app, const std::string& name, std::int64_t min,
                            std::int64_t max, const std::string& placeholder,
                            std::function<void(std::int64_t)> set) {
  const auto [help, type] = help_and_type(app, name, placeholder);
  // A process ID's range is the kernel's (PID_MAX_LIMIT), not worth a line of help.
  const std::string shown = type == "PID" ? help : fmt::format("{} ({} to {})", help, min, max);
  return app
      .add_option_function<std::string>(
          name,
          [=](const std::string& s) {
            const auto v = text::integer_within(s, min, max);
            if (!v) refuse(name, s, v.error().message());
            set(*v);
          },
          shown)
      ->type_name(type);
}

}  // namespace

int terminal_width() {
  winsize ws{};
  int cols = 0;
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) cols = ws.ws_col;
  if (cols == 0)
    if (const char* c = std::getenv("COLUMNS")) cols = std::atoi(c);
  if (cols <= 0) cols = 100;
  return std::clamp(cols, 60, 120);
}

bool use_color(const std::string& choice) {
  if (choice != "auto") return choice == "always";
  const char* no_color = std::getenv("NO_COLOR");
  return ::isatty(STDOUT_FILENO) != 0 && (no_color == nullptr || *no_color == '\0');
}

namespace {

class Help : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    std::string out = make_usage(app, name) + "\n";
    if (!app->get_description().empty()) out += app->get_description() + "\n";
    out += make_positionals(app);
    out += make_groups(app, mode);
    out += make_subcommands(app, mode);
    if (!app->get_footer().empty()) out += "\n" + app->get_footer() + "\n";
    return out;
  }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string out = "Usage: " + name;
    if (!app->get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }).empty())
      out += " COMMAND";
    out += " [OPTIONS]";
    for (const auto* o :
         app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
      const std::string shown = o->get_type_name() + (o->get_expected_max() > 1 ? "..." : "");
      out += o->get_required() ? " " + shown : " [" + shown + "]";
    }
    if (app->get_prefix_command()) out += " -- COMMAND...";
    return out + "\n";
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    const auto found = summaries().find(sub);
    std::string summary = found != summaries().end() ? found->second : sub->get_description();
    summary = summary.substr(0, summary.find('\n'));
    return line("  " + sub->get_name(), summary);
  }

  std::string make_option(const CLI::Option* opt, bool positional) const override {
    std::string left = "  " + make_option_name(opt, positional);
    if (!positional && opt->get_type_size() != 0) left += " " + opt->get_type_name();
    return line(left, opt->get_description());
  }

 private:
  static constexpr std::size_t kColumn = 28;

  static std::string line(std::string left, const std::string& help) {
    const auto width = static_cast<std::size_t>(terminal_width());
    if (left.size() + 2 > kColumn) {
      left += '\n';
      left += std::string(kColumn, ' ');
    } else {
      left += std::string(kColumn - left.size(), ' ');
    }
    return left + text::wrap(help, kColumn, width) + "\n";
  }
};

// The long options of `app` ("--json", "--root"), for a "did you mean".
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* o : app.get_options())
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
  return names;
}

std::string wording(const CLI::ParseError& e, const std::string& path, const CLI::App& deepest) {
  const std::string what = e.what();
  // The kind by its exit code: some CLI11 errors carry the command's name instead of theirs.
  const auto is = [&](CLI::ExitCodes code) { return e.get_exit_code() == static_cast<int>(code); };
  if (is(CLI::ExitCodes::ExtrasError)) {
    // CLI11 lists them last first.
    const auto colon = what.find(": ");
    const std::string listed = colon == std::string::npos ? what : what.substr(colon + 2);
    auto words = text::fields(listed);
    std::reverse(words.begin(), words.end());
    const std::string first(words.empty() ? std::string_view() : words.front());
    if (first.starts_with("-")) {
      // "--jsno" or "--jsno=x": the name alone is matched.
      const auto guess = first.starts_with("--")
                             ? nearest(first.substr(0, first.find('=')), option_names(deepest))
                             : std::string();
      if (!guess.empty()) return fmt::format("unknown option {}; did you mean {}?", first, guess);
      return fmt::format("unknown option {} (dltune {} --help lists the options)", first, path);
    }
    std::vector<std::string> all(words.begin(), words.end());
    return fmt::format("unexpected {}", text::join(all, " "));
  }
  if (is(CLI::ExitCodes::ArgumentMismatch)) {
    const auto colon = what.find(':');
    return fmt::format("{} needs a value", what.substr(0, colon));
  }
  if (is(CLI::ExitCodes::RequiredError)) {
    if (what.find("subcommand") != std::string::npos)
      return fmt::format("which command? (dltune {}--help lists them)",
                         path.empty() ? "" : path + " ");
    // "-o,--output is required" / "recording is required"
    const auto name = long_name(what.substr(0, what.find(" is required")));
    if (name.starts_with("-")) return name + " is required";
    std::string upper = name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper + " is required";
  }
  return what;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(s->get_name());
  return names;
}

}  // namespace

CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& summary,
                      const std::string& description) {
  auto* sub = parent.add_subcommand(name, description);
  summaries()[sub] = summary;
  sub->group("Commands");
  sub->footer("");
  sub->set_version_flag("--version", std::string("dltune ") + DLTUNE_VERSION);
  return sub;
}

CLI::App* add_command(CLI::App& parent, const std::string& name) {
  const auto text = command_text(name);
  if (!text) throw std::logic_error(text.error().message());
  return add_command(parent, name, text->summary, text->help());
}

std::string command_of(const CLI::App& app) {
  const CLI::App* a = &app;
  while (a->get_parent() != nullptr && a->get_parent()->get_parent() != nullptr)
    a = a->get_parent();
  return a->get_name();
}

std::string long_name(const std::string& names) {
  const auto parts = text::split(names, ',');
  for (const auto& p : parts)
    if (text::starts_with(p, "--")) return std::string(p);
  return std::string(parts.front());
}

namespace {

// The text of the command `app` belongs to, each file parsed once per process.
const CommandText& text_of(const CLI::App& app) {
  static std::map<std::string, CommandText> texts;
  const auto command = command_of(app);
  auto it = texts.find(command);
  if (it == texts.end()) {
    auto text = command_text(command);
    if (!text) throw std::logic_error(text.error().message());
    it = texts.emplace(command, std::move(*text)).first;
  }
  return it->second;
}

}  // namespace

OptionText option_text(const CLI::App& app, const std::string& name) {
  const auto& options = text_of(app).options;
  const auto key = long_name(name);
  const auto o = options.find(key);
  if (o == options.end())
    throw std::logic_error(
        fmt::format("commands/{}.toml: [options] has no \"{}\"", command_of(app), key));
  return o->second;
}

CLI::App* add_subcommand(CLI::App& parent, const std::string& name) {
  const auto& subs = text_of(parent).subcommands;
  const auto s = subs.find(name);
  if (s == subs.end())
    throw std::logic_error(
        fmt::format("commands/{}.toml: [subcommands] has no {}", command_of(parent), name));
  return parent.add_subcommand(name, s->second);
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::int64_t& ns,
                          std::int64_t min_ns, std::int64_t max_ns) {
  return duration_option(app, name, min_ns, max_ns, [&ns](std::int64_t v) { ns = v; });
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::optional<std::int64_t>& ns,
                          std::int64_t min_ns, std::int64_t max_ns) {
  return duration_option(app, name, min_ns, max_ns, [&ns](std::int64_t v) { ns = v; });
}

CLI::Option* add_integer_with(CLI::App& app, const std::string& name, std::int64_t min,
                              std::int64_t max, const std::string& type,
                              std::function<void(std::int64_t)> set) {
  return integer_option(app, name, min, max, type, std::move(set));
}

CLI::Option* add_number(CLI::App& app, const std::string& name, double& value, double min,
                        double max, const std::string& placeholder) {
  const auto [help, type] = help_and_type(app, name, placeholder);
  return app
      .add_option_function<std::string>(
          name,
          [=, &value](const std::string& s) {
            const auto v = text::number_within(s, min, max);
            if (!v) refuse(name, s, v.error().message());
            value = *v;
          },
          fmt::format("{} ({} to {})", help, min, max))
      ->type_name(type);
}

CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& value,
                        const std::vector<std::string>& choices) {
  const auto help = option_text(app, name).help;
  return app
      .add_option_function<std::string>(
          name,
          [=, &value](const std::string& s) {
            if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
              std::string allowed = choices.front();
              for (std::size_t i = 1; i < choices.size(); ++i)
                allowed += (i + 1 == choices.size() ? " or " : ", ") + choices[i];
              refuse(name, s, "expected " + allowed);
            }
            value = s;
          },
          help)
      ->type_name(text::join(choices, "|"));
}

CLI::Option* add_list(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                      const std::string& placeholder) {
  const auto [help, type] = help_and_type(app, name, placeholder);
  // "... (default: / and /home)" becomes "... (default: / and /home; repeat it, or A,B)".
  const std::string shown = help.ends_with(")")
                                ? help.substr(0, help.size() - 1) + "; repeat it, or A,B)"
                                : help + " (repeat it, or A,B)";
  return app.add_option(name, values, shown)->delimiter(',')->type_name(type);
}

void use_dltune_help(CLI::App& app) {
  app.formatter(std::make_shared<Help>());
}

std::string command_path(const CLI::App& app) {
  std::string path;
  const CLI::App* a = &app;
  for (auto subs = a->get_subcommands(); !subs.empty(); subs = a->get_subcommands()) {
    a = subs.front();
    path += (path.empty() ? "" : " ") + a->get_name();
  }
  return path;
}

std::string nearest(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& k : known) {
    if (word.size() >= 2 && k.starts_with(word)) return k;
    const auto distance = text::edit_distance(word, k);
    const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
    if (distance <= limit && distance < best_distance) {
      best = k;
      best_distance = distance;
    }
  }
  return best;
}

std::optional<int> parse(CLI::App& app, std::vector<std::string> args) {
  if (args.empty()) {
    std::cerr << app.help();
    return 2;
  }
  if (args.front() == "help") {
    args.erase(args.begin());
    args.emplace_back("--help");
  }
  const auto names = command_names(app);
  if (!args.front().starts_with("-") &&
      std::find(names.begin(), names.end(), args.front()) == names.end()) {
    const auto guess = nearest(args.front(), names);
    fmt::print(stderr, "dltune: unknown command {}; {}\n", args.front(),
               guess.empty() ? "dltune --help lists the commands"
                             : fmt::format("did you mean {}?", guess));
    return 2;
  }
  // A mistyped subcommand below the first ("tune plna"): the words before the first option,
  // followed down the commands, each checked where a command must have a subcommand or takes
  // no words of its own.
  const CLI::App* at = &app;
  std::string said = "dltune";
  for (const auto& word : args) {
    if (word.starts_with("-")) break;
    const auto subs = command_names(*at);
    if (subs.empty()) break;
    if (std::find(subs.begin(), subs.end(), word) != subs.end()) {
      at = at->get_subcommand(word);
      said += " " + word;
      continue;
    }
    const bool takes_words =
        !at->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
    if (at->get_require_subcommand_min() == 0 && takes_words) break;
    const auto guess = nearest(word, subs);
    fmt::print(stderr, "{}: unknown command {}; {}\n", said, word,
               guess.empty() ? fmt::format("{} --help lists the commands", said)
                             : fmt::format("did you mean {}?", guess));
    return 2;
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const auto path = command_path(app);
    const CLI::App* deepest = &app;
    for (auto subs = deepest->get_subcommands(); !subs.empty(); subs = deepest->get_subcommands())
      deepest = subs.front();
    fmt::print(stderr, "dltune{}{}: {}\n", path.empty() ? "" : " ", path,
               wording(e, path, *deepest));
    return 2;
  }
  return std::nullopt;
}

int with_output_checked(const std::function<int()>& run) {
  int rc = 0;
  try {
    rc = run();
  } catch (const std::system_error& e) {
    if (std::string_view(e.what()).find("cannot write to file") == std::string_view::npos) throw;
    fmt::print(stderr, "dltune: cannot write the output: {}\n", std::strerror(e.code().value()));
    return 1;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    const int err = errno != 0 ? errno : EIO;
    fmt::print(stderr, "dltune: cannot write the output: {}\n", std::strerror(err));
    return 1;
  }
  return rc;
}

bool confirmed(const std::string& question) {
  fmt::print("{}", question);
  std::fflush(stdout);
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "y" || answer == "Y" || answer == "yes";
}

std::optional<std::vector<std::string>> take_after_dashdash(
    std::vector<std::string>& args, const std::vector<std::string>& commands) {
  const auto dashdash = std::find(args.begin(), args.end(), "--");
  if (dashdash == args.end() || std::none_of(args.begin(), dashdash, [&](const std::string& a) {
        return std::find(commands.begin(), commands.end(), a) != commands.end();
      }))
    return std::nullopt;
  std::vector<std::string> after(dashdash + 1, args.end());
  args.erase(dashdash, args.end());
  return after;
}

Result<std::vector<std::string>> job_command(
    const std::vector<std::string>& remaining,
    const std::optional<std::vector<std::string>>& after_dashdash, const char* command_name) {
  if (!remaining.empty() && remaining.front().starts_with("-"))
    return fail(fmt::format("unknown option {} (dltune {} --help lists the options)",
                            remaining.front(), command_name));
  if (!remaining.empty() && after_dashdash)
    return fail(fmt::format("unexpected {} before --: the job's COMMAND comes after --",
                            remaining.front()));
  if (!remaining.empty())
    return fail(fmt::format(
        "unexpected {}: the job's COMMAND comes after -- (dltune {} [OPTIONS] -- COMMAND...)",
        remaining.front(), command_name));
  return after_dashdash.value_or(std::vector<std::string>{});
}

}  // namespace dltune::options

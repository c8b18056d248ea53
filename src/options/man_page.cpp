#include "options/man_page.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "core/text.hpp"
#include "options/command_text.hpp"
#include "options/roff.hpp"

namespace dltune::options {

namespace {

using roff::bold;
using roff::escape;
using roff::italic;

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

bool is_generic(const CLI::Option& o) {
  const auto& l = o.get_lnames();
  return std::find(l.begin(), l.end(), "help") != l.end() ||
         std::find(l.begin(), l.end(), "version") != l.end();
}

// "--profile" of -p,--profile; a positional's name.
std::string primary_name(const CLI::Option& o) {
  if (!o.get_lnames().empty()) return "--" + o.get_lnames().front();
  if (!o.get_snames().empty()) return "-" + o.get_snames().front();
  return o.get_name();
}

// A flag expects no value (CLI11 sets a flag's expected count to 0).
bool takes_value(const CLI::Option& o) {
  return o.get_positional() || o.get_expected_max() != 0;
}

// Spaces that groff must not break a line at.
std::string unbroken(std::string roff_text) {
  std::string out;
  for (const char c : roff_text) out += c == ' ' ? std::string("\\ ") : std::string(1, c);
  return out;
}

// One word of a synopsis: "[--profile PROFILE]", "[--only ID]...", "RECORDING".
std::string synopsis_word(const CLI::Option& o) {
  std::string w;
  if (o.get_positional()) {
    w = italic(o.get_type_name());
  } else {
    w = bold(primary_name(o));
    if (takes_value(o)) w += "\\ " + italic(o.get_type_name());
  }
  if (!o.get_required()) w = "[" + w + "]";
  if (o.get_expected_max() > 1) w += "...";
  return w;
}

// A synopsis line: the words, its continuation lines indented.
std::string synopsis_line(const std::string& words, const CLI::App& app) {
  std::string line = unbroken(bold(words));
  for (const auto* o : app.get_options())
    if (!is_generic(*o) && !o->get_positional()) line += " " + synopsis_word(*o);
  for (const auto* o : app.get_options())
    if (o->get_positional()) line += " " + synopsis_word(*o);
  if (app.get_prefix_command()) line += " \\fB\\-\\-\\fR\\ \\fICOMMAND\\fR...";
  return ".in +4n\n.ti -4n\n" + line + "\n.in -4n\n";
}

std::string option_item(const CLI::Option& o) {
  std::string tag;
  if (o.get_positional()) {
    tag = italic(o.get_type_name());
  } else {
    std::vector<std::string> names;
    for (const auto& s : o.get_snames()) names.push_back(bold("-" + s));
    for (const auto& l : o.get_lnames()) names.push_back(bold("--" + l));
    tag = text::join(names, ", ");
    if (takes_value(o)) tag += " " + italic(o.get_type_name());
  }
  return ".TP\n" + tag + "\n" + roff::filled(o.get_description());
}

// Whether a subcommand's option is a copy of one of its command's (the same name and help).
bool inherited(const CLI::Option& o, const CLI::App* parent) {
  if (parent == nullptr) return false;
  for (const auto* p : parent->get_options())
    if (primary_name(*p) == primary_name(o) && p->get_description() == o.get_description())
      return true;
  return false;
}

// The options of `app`, those of --help and --version last; none of `parent`'s when given.
std::string option_items(const CLI::App& app, const CLI::App* parent = nullptr) {
  std::string out;
  for (const bool generic : {false, true})
    for (const auto* o : app.get_options())
      if (is_generic(*o) == generic && !inherited(*o, parent)) out += option_item(*o);
  return out;
}

std::string header(const std::string& name, const std::string& summary, const ManExtras& extras) {
  std::string upper = name;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return ".\\\" Made by `dltune __generate-docs` from the command definitions "
         "(commands/*.toml); do not edit.\n"
         ".TH \"" +
         escape(upper) + "\" 1 \"\" \"" + escape(extras.source) +
         "\" \"dltune manual\"\n"
         // Left-aligned and never hyphenated: option names, paths and page names stay whole.
         ".nh\n.ad l\n"
         ".SH NAME\n" +
         escape(name) + " \\- " + escape(summary) + "\n";
}

std::string see_also(const std::vector<std::string>& pages) {
  std::string out = ".SH \"SEE ALSO\"\n";
  for (std::size_t i = 0; i < pages.size(); ++i)
    out += ".BR " + escape(pages[i]) + " (1)" + (i + 1 < pages.size() ? "," : "") + "\n";
  return out;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// Whether `word` occurs in `text` on its own (not inside a longer name).
bool mentions(const std::string& text, const std::string& word) {
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_word_char(text[at - 1]);
    const auto end = at + word.size();
    const bool ends = end == text.size() || !is_word_char(text[end]) ||
                      (text[end] == '-' && (end + 1 == text.size() || text[end + 1] == '-'));
    if (starts && ends) return true;
  }
  return false;
}

// Every text of a command: what its page may mention.
std::string all_text(const CLI::App& command, const CommandText& text) {
  std::string out = text.summary + "\n" + text.description + "\n" + text.exit_status + "\n" +
                    text.environment.value_or("") + "\n" + text.examples.value_or("");
  for (const auto& [key, option] : text.options) out += "\n" + option.help;
  for (const auto* sub : subcommands_of(command)) out += "\n" + sub->get_description();
  return out;
}

// Environment variable names in a text: upper-case words with an underscore (SLURM_CONF).
std::vector<std::string> variables_in(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isupper(static_cast<unsigned char>(text[i])) ||
        (i > 0 && is_word_char(text[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && (std::isupper(static_cast<unsigned char>(text[j])) ||
                               std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '_'))
      ++j;
    const auto word = text.substr(i, j - i);
    if (word.find('_') != std::string::npos && word.back() != '_' &&
        std::find(out.begin(), out.end(), word) == out.end())
      out.push_back(word);
    i = j;
  }
  return out;
}

CommandText text_of_command(const CLI::App& command) {
  auto text = command_text(command.get_name());
  if (!text) throw std::logic_error(text.error().message());
  return std::move(*text);
}

ManPage command_page(const CLI::App& command, const ManExtras& extras,
                     const std::vector<std::string>& commands) {
  const auto& name = command.get_name();
  const auto text = text_of_command(command);
  const auto everything = all_text(command, text);
  const auto subs = subcommands_of(command);
  ManPage page;
  page.name = "dltune-" + name;
  std::string& out = page.text;
  out = header(page.name, text.summary, extras);

  out += ".SH SYNOPSIS\n";
  if (subs.empty() || !command.get_require_subcommand_min())
    out += synopsis_line("dltune " + name, command);
  else
    out += ".in +4n\n.ti -4n\n" + unbroken(bold("dltune " + name)) + " [" + italic("OPTIONS") +
           "] " + italic("COMMAND") + " ...\n.in -4n\n";
  for (const auto* sub : subs) out += synopsis_line("dltune " + name + " " + sub->get_name(), *sub);

  out += ".SH DESCRIPTION\n" + roff::blocks(text.description);
  if (!subs.empty()) {
    out += ".SH COMMANDS\n";
    for (const auto* sub : subs) {
      out += ".SS \"" + escape("dltune " + name + " " + sub->get_name()) + "\"\n" +
             roff::filled(sub->get_description());
      out += option_items(*sub, &command);
      std::vector<std::string> shared;
      for (const auto* o : sub->get_options())
        if (!is_generic(*o) && inherited(*o, &command)) shared.push_back(bold(primary_name(*o)));
      if (!shared.empty())
        out += ".PP\nAlso " + text::join(shared, ", ") + ", as " + bold("dltune " + name) +
               " takes them (OPTIONS).\n";
    }
  }
  out += ".SH OPTIONS\n" + option_items(command);
  out += ".SH \"EXIT STATUS\"\n" + roff::blocks(text.exit_status);

  std::string environment;
  if (text.environment) environment += roff::blocks(*text.environment);
  for (const auto& e : extras.environment) {
    const bool listed = std::find(e.commands.begin(), e.commands.end(), name) != e.commands.end();
    const bool own = text.environment && mentions(*text.environment, e.name);
    if (!own && (listed || mentions(everything, e.name)))
      environment += ".TP\n" + bold(e.name) + "\n" + roff::filled(e.text);
  }
  if (!environment.empty()) out += ".SH ENVIRONMENT\n" + environment;

  std::string files;
  for (const auto& f : extras.files)
    if (std::find(f.commands.begin(), f.commands.end(), name) != f.commands.end())
      files += ".TP\n" + bold(f.name) + "\n" + roff::filled(f.text);
  if (!files.empty()) out += ".SH FILES\n" + files;

  if (text.examples)
    out += ".SH EXAMPLES\n" + roff::blocks(*text.examples, roff::Layout::kExamples);

  std::vector<std::string> related{"dltune"};
  for (const auto& other : commands)
    if (other != name && mentions(everything, "dltune " + other))
      related.push_back("dltune-" + other);
  out += see_also(related);
  return page;
}

ManPage program_page(const CLI::App& program, const ManExtras& extras) {
  const auto commands = subcommands_of(program);
  const std::string description = program.get_description();
  const auto first_stop = description.find(". ");
  ManPage page;
  page.name = "dltune";
  std::string& out = page.text;
  out = header("dltune", description.substr(0, first_stop), extras);

  out += ".SH SYNOPSIS\n";
  for (const auto* form :
       {"\\fBdltune\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR...]",
        "\\fBdltune help\\fR [\\fICOMMAND\\fR]", "\\fBdltune\\fR \\fB\\-\\-version\\fR",
        "\\fBdltune\\fR \\fB\\-\\-help\\fR"})
    out += std::string(".in +4n\n.ti -4n\n") + form + "\n.in -4n\n";
  out += ".SH DESCRIPTION\n" + roff::blocks(description);

  out += ".SH COMMANDS\n";
  std::vector<std::string> names;
  for (const auto* c : commands) {
    names.push_back(c->get_name());
    const auto text = text_of_command(*c);
    std::string tag = bold(c->get_name());
    std::vector<std::string> subs;
    for (const auto* s : subcommands_of(*c)) subs.push_back(s->get_name());
    if (!subs.empty()) tag += " " + italic(text::join(subs, "|"));
    out += ".TP\n" + tag + "\n" + roff::filled(text.summary) + "(" +
           bold("dltune-" + c->get_name()) + "(1))\n";
  }
  out += ".TP\n" + bold("help") + " [" + italic("COMMAND") + "]\n" +
         roff::filled("The help of dltune, or of COMMAND (as dltune COMMAND --help).");

  out += ".SH OPTIONS\n" + option_items(program);
  out += ".SH \"EXIT STATUS\"\n" + roff::blocks(extras.exit_status);

  out += ".SH ENVIRONMENT\n";
  std::set<std::string> known;
  for (const auto& e : extras.environment) {
    known.insert(e.name);
    out += ".TP\n" + bold(e.name) + "\n" + roff::filled(e.text);
  }
  for (const auto* c : commands) {
    const auto text = text_of_command(*c);
    if (!text.environment) continue;
    std::vector<std::string> own;
    for (const auto& v : variables_in(*text.environment))
      if (known.count(v) == 0) own.push_back(v);
    if (own.empty()) continue;
    std::vector<std::string> shown;
    for (const auto& v : own) shown.push_back(bold(v));
    out += ".TP\n" + text::join(shown, ", ") + "\nRead by " + bold("dltune " + c->get_name()) +
           ": " + bold("dltune-" + c->get_name()) + "(1) says how.\n";
  }

  out += ".SH FILES\n";
  for (const auto& f : extras.files) out += ".TP\n" + bold(f.name) + "\n" + roff::filled(f.text);

  std::vector<std::string> pages;
  for (const auto& n : names) pages.push_back("dltune-" + n);
  out += see_also(pages);
  return page;
}

}  // namespace

std::vector<ManPage> man_pages(const CLI::App& program, const ManExtras& extras) {
  std::vector<ManPage> pages{program_page(program, extras)};
  std::vector<std::string> names;
  for (const auto* c : subcommands_of(program)) names.push_back(c->get_name());
  for (const auto* c : subcommands_of(program)) pages.push_back(command_page(*c, extras, names));
  return pages;
}

}  // namespace dltune::options

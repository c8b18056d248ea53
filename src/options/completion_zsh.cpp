// The zsh script: one function per command, each an _arguments spec of its options (with their
// help) and, for a command with subcommands, a state that hands the rest to the subcommand's
// function. It works autoloaded from $fpath (as _dltune) and sourced after compinit.
#include <fmt/core.h>

#include "core/text.hpp"
#include "options/completion.hpp"

namespace dltune::options {

namespace {

using text::shell_quote;

// The function of the command at `path`: _dltune, _dltune__tune, _dltune__slurm__task_prolog.
std::string function_of(const std::string& path) {
  std::string f = "_dltune";
  if (path.empty()) return f;
  f += "__";
  for (const char c : path) f += c == ' ' ? std::string("__") : std::string(1, c == '-' ? '_' : c);
  return f;
}

// Text inside an _arguments spec's [description] or :message: field.
std::string spec_text(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\' || c == '[' || c == ']' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

std::string action(const CompletedOption& o) {
  switch (o.kind) {
    case ValueKind::kFlag:
    case ValueKind::kAny:
      return " ";
    case ValueKind::kWords:
      return "(" + text::join(o.words, " ") + ")";
    case ValueKind::kProfile:
      return "_dltune_profiles";
    case ValueKind::kSettingId:
      return "_dltune_ids";
    case ValueKind::kGpu:
      return "_dltune_gpus";
    case ValueKind::kRecording:
      return "_dltune_recordings";
    case ValueKind::kFile:
      return "_files";
    case ValueKind::kDirectory:
      return "_files -/";
  }
  return " ";
}

bool is_generic(const CompletedOption& o) {
  for (const auto& n : o.names)
    if (n == "--help" || n == "--version") return true;
  return false;
}

// The specs of one option, one per name: '(-p --profile)--profile=[help]:PROFILE:action'.
std::vector<std::string> specs(const CompletedOption& o) {
  std::string exclusions;
  if (is_generic(o))
    exclusions = "(- *)";
  else if (o.names.size() > 1 && !o.repeatable)
    exclusions = "(" + text::join(o.names, " ") + ")";
  std::vector<std::string> out;
  for (const auto& n : o.names) {
    std::string spec = exclusions + (o.repeatable ? "*" : "") + n;
    if (o.kind != ValueKind::kFlag) spec += n.starts_with("--") ? "=" : "+";
    spec += "[" + spec_text(o.help) + "]";
    if (o.kind != ValueKind::kFlag) spec += ":" + spec_text(o.placeholder) + ":" + action(o);
    out.push_back(shell_quote(spec));
  }
  return out;
}

std::string arguments(const CompletedCommand& c, const std::vector<std::string>& extra) {
  std::vector<std::string> all;
  for (const auto& o : c.options)
    for (auto& s : specs(o)) all.push_back(std::move(s));
  if (c.positional)
    all.push_back(shell_quote((c.positional->repeatable ? "*:" : "1:") +
                              spec_text(c.positional->placeholder) + ":" + action(*c.positional)));
  all.insert(all.end(), extra.begin(), extra.end());
  std::string out = "_arguments";
  if (!extra.empty()) out += " -C";
  for (const auto& a : all) out += " \\\n    " + a;
  return out;
}

std::string command_function(const std::vector<CompletedCommand>& model,
                             const CompletedCommand& c) {
  const auto fn = function_of(c.path);
  const std::string prefix = c.path.empty() ? "" : c.path + " ";
  std::string out;
  if (c.path == "help") return fn + "() {\n  _arguments '1: :_dltune_commands'\n}\n\n";
  if (c.subcommands.empty()) {
    out += fn + "() {\n";
    if (c.job_command)
      out +=
          "  # After \"--\": the job's command, completed as that command.\n"
          "  local dashdash=${words[(i)--]}\n"
          "  if (( dashdash < CURRENT )); then\n"
          "    shift dashdash words\n"
          "    (( CURRENT -= dashdash ))\n"
          "    _normal\n"
          "    return\n"
          "  fi\n";
    return out + "  " + arguments(c, {}) + "\n}\n\n";
  }
  // The subcommands with their summaries, then the command's own function.
  out += fn + "_commands() {\n  local -a commands=(\n";
  for (const auto& s : c.subcommands) {
    const auto* sub = find_completed(model, prefix + s);
    out += "    " + shell_quote(s + ":" + (sub != nullptr ? sub->summary : s)) + "\n";
  }
  out += fmt::format("  )\n  _describe -t commands {} commands\n}}\n\n",
                     shell_quote((c.path.empty() ? "dltune" : "dltune " + c.path) + " command"));
  std::string context = "dltune";
  for (const auto part : text::split(c.path, ' '))
    if (!part.empty()) context += "-" + std::string(part);
  out += fn + "() {\n";
  out += "  local curcontext=$curcontext state state_descr line ret=1\n";
  out += "  typeset -A opt_args\n";
  out += "  " +
         arguments(c, {shell_quote("1: :" + fn + "_commands"), shell_quote("*:: :->command")}) +
         " && ret=0\n";
  out += "  if [[ $state == command ]]; then\n";
  out += "    curcontext=${curcontext%:*:*}:" + context + "-$words[1]:\n";
  out += "    case $words[1] in\n";
  for (const auto& s : c.subcommands)
    out += "      (" + s + ") " + function_of(prefix + s) + " && ret=0 ;;\n";
  out += "    esac\n  fi\n  return ret\n}\n\n";
  return out;
}

constexpr const char* kHelpers = R"ZSH(
_dltune_profiles() {
  local -a profiles=($_dltune_builtin_profiles /etc/dltune/profiles/*.toml(N:t:r))
  local ret=1
  _wanted profiles expl profile compadd -a profiles && ret=0
  if [[ $PREFIX == */* || $PREFIX == *.* ]]; then
    _files -g '*.toml(-.)' && ret=0
  fi
  return ret
}

_dltune_ids() {
  local -a ids=($_dltune_builtin_ids) files=(/etc/dltune/profiles/*.toml(N))
  if (( $#files )); then
    ids+=(${(f)"$(sed -n 's/^[[:space:]]*\[settings\."\([^"]*\)"\].*/\1/p' $files 2>/dev/null)"})
  fi
  compset -P '*,'
  _wanted setting-ids expl 'setting id' compadd -a ids
}

# GPU indexes: one per GPU the NVIDIA driver lists, else nvidia-smi's; none without either.
_dltune_gpus() {
  local -a gpus dirs=(/proc/driver/nvidia/gpus/*(N))
  if (( $#dirs )); then
    gpus=({0..$(( $#dirs - 1 ))})
  elif (( $+commands[nvidia-smi] )); then
    gpus=(${(f)"$(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9][0-9]*\):.*/\1/p')"})
  fi
  compset -P '*,'
  _wanted gpus expl 'GPU index' compadd -a gpus
}

_dltune_recordings() {
  _files -g '*.db(-.)'
}
)ZSH";

}  // namespace

std::string zsh_completion(const std::vector<CompletedCommand>& model,
                           const CompletionWords& words) {
  std::string out =
      "#compdef dltune\n"
      "# zsh completion for dltune. Made by `dltune completion zsh` (dltune " DLTUNE_VERSION
      ") from its\n"
      "# command definitions: do not edit. Install it as _dltune in a directory of $fpath, or "
      "load it\n"
      "# with `source <(dltune completion zsh)` after compinit.\n\n";
  const auto quoted = [](const std::vector<std::string>& list) {
    std::vector<std::string> q;
    for (const auto& w : list) q.push_back(shell_quote(w));
    return text::join(q, " ");
  };
  out += "_dltune_builtin_profiles=(" + quoted(words.profiles) + ")\n";
  out += "_dltune_builtin_ids=(" + quoted(words.setting_ids) + ")\n";
  out += kHelpers;
  out += "\n";
  for (const auto& c : model) out += command_function(model, c);
  out +=
      "# Autoloaded from $fpath, this file is _dltune's body: complete now. Sourced, register.\n"
      "if [[ $funcstack[1] == _dltune ]]; then\n"
      "  _dltune \"$@\"\n"
      "else\n"
      "  compdef _dltune dltune\n"
      "fi\n";
  return out;
}

}  // namespace dltune::options

// The bash script: the commands, options and value kinds as `case` tables, and one function that
// finds the command being typed (skipping options' values) and completes the word at the cursor.
// It needs nothing beyond bash itself; where bash-completion is loaded, a job's command after
// "--" is completed as that command.
#include <fmt/core.h>

#include "core/text.hpp"
#include "options/completion.hpp"

namespace dltune::options {

namespace {

using text::shell_quote;

// A value's kind for _dltune_complete_value: "profile", "id+" (a comma-separated list),
// "words:auto always never"; "" for a flag.
std::string kind_word(const CompletedOption& o) {
  std::string k;
  switch (o.kind) {
    case ValueKind::kFlag:
      return "";
    case ValueKind::kAny:
      k = "any";
      break;
    case ValueKind::kWords:
      k = "words";
      break;
    case ValueKind::kProfile:
      k = "profile";
      break;
    case ValueKind::kSettingId:
      k = "id";
      break;
    case ValueKind::kGpu:
      k = "gpu";
      break;
    case ValueKind::kRecording:
      k = "recording";
      break;
    case ValueKind::kFile:
      k = "file";
      break;
    case ValueKind::kDirectory:
      k = "dir";
      break;
  }
  if (o.list) k += "+";
  if (o.kind == ValueKind::kWords) k += ":" + text::join(o.words, " ");
  return k;
}

constexpr const char* kBashFunctions = R"BASH(
# Profiles in /etc/dltune/profiles, and the setting ids they name, looked up when completing.
_dltune_etc_profiles() {
  local f
  for f in /etc/dltune/profiles/*.toml; do
    [[ -e $f ]] || continue
    f=${f##*/}
    printf '%s\n' "${f%.toml}"
  done
}

_dltune_etc_ids() {
  local f
  for f in /etc/dltune/profiles/*.toml; do
    [[ -r $f ]] && sed -n 's/^[[:space:]]*\[settings\."\([^"]*\)"\].*/\1/p' "$f"
  done
}

# GPU indexes: one per GPU the NVIDIA driver lists, else nvidia-smi's; none without either.
_dltune_gpus() {
  local n=0 d
  for d in /proc/driver/nvidia/gpus/*; do
    [[ -e $d ]] && printf '%s\n' "$((n++))"
  done
  if ((n == 0)) && type -P nvidia-smi >/dev/null; then
    nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9][0-9]*\):.*/\1/p'
  fi
}

# COMPREPLY for a value of kind $1 ("words:W...", "id+", ...): $2 is the word so far, $3 what
# goes before each answer ("--only=" when the option and its value are one word).
_dltune_complete_value() {
  local kind=${1%%:*} cur=$2 before=$3 words=''
  if [[ $kind == *+ ]]; then
    kind=${kind%+}
    before+=${cur%"${cur##*,}"}
    cur=${cur##*,}
  fi
  COMPREPLY=()
  case $kind in
    words) words=${1#*:} ;;
    profile)
      words="$_dltune_builtin_profiles $(_dltune_etc_profiles)"
      if [[ $cur == */* || $cur == *.* ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -X '!*.toml' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    id) words="$_dltune_builtin_ids $(_dltune_etc_ids)" ;;
    gpu) words=$(_dltune_gpus) ;;
    recording)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -X '!*.db' -- "$cur"; compgen -d -- "$cur") ;;
    file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    dir)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
  esac
  if [[ -n $words ]]; then
    local w
    for w in $(compgen -W "$words" -- "$cur"); do COMPREPLY+=("$w"); done
  fi
  if [[ -n $before ]]; then
    local i
    for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=$before${COMPREPLY[i]}; done
  fi
}

# The job's command after "--" (run, record, profile, bench): completed as that command where
# bash-completion is loaded, else a command name and then files.
_dltune_job_command() {
  if declare -F _command_offset >/dev/null; then
    _command_offset "$1"
  elif ((COMP_CWORD == $1)); then
    mapfile -t COMPREPLY < <(compgen -c -- "$cur")
  else
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}

_dltune() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev='' path='' word option='' before='' i
  local _dltune_reply=''
  # The command being typed ("tune apply"): the known command words, options' values skipped.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == -- ]] && _dltune_job "$path"; then
      _dltune_job_command $((i + 1))
      return 0
    fi
    case $word in
      -*=*) ;;
      -*)
        _dltune_value "$path" "$word"
        if [[ -n $_dltune_reply ]]; then
          i=$((i + 1))
          # "--opt=value" arrives as three words when COMP_WORDBREAKS holds "=".
          [[ ${COMP_WORDS[i]} == = ]] && i=$((i + 1))
        fi ;;
      *)
        _dltune_commands "$path"
        [[ " $_dltune_reply " == *" $word "* ]] && path=${path:+$path }$word ;;
    esac
  done
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  if [[ $cur == = && $prev == -* ]]; then
    option=$prev cur=''
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    option=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == -*=* ]]; then
    option=${cur%%=*} before=${cur%%=*}= cur=${cur#*=}
  elif [[ $prev == -* ]]; then
    option=$prev
  fi
  if [[ -n $option ]]; then
    _dltune_value "$path" "$option"
    if [[ -n $_dltune_reply ]]; then
      _dltune_complete_value "$_dltune_reply" "$cur" "$before"
      return 0
    fi
  fi
  COMPREPLY=()
  if [[ $cur == -* ]]; then
    _dltune_options "$path"
    for word in $(compgen -W "$_dltune_reply" -- "$cur"); do COMPREPLY+=("$word"); done
    return 0
  fi
  _dltune_commands "$path"
  if [[ -n $_dltune_reply ]]; then
    for word in $(compgen -W "$_dltune_reply" -- "$cur"); do COMPREPLY+=("$word"); done
    return 0
  fi
  _dltune_value "$path" '#'
  [[ -n $_dltune_reply ]] && _dltune_complete_value "$_dltune_reply" "$cur" ''
  return 0
}

complete -F _dltune dltune
)BASH";

}  // namespace

std::string bash_completion(const std::vector<CompletedCommand>& model,
                            const CompletionWords& words) {
  std::string out =
      "# bash completion for dltune                                   -*- shell-script -*-\n"
      "# Made by `dltune completion bash` (dltune " DLTUNE_VERSION
      ") from its command definitions: do not\n"
      "# edit. Load it with `source <(dltune completion bash)`, or install it as\n"
      "# /usr/share/bash-completion/completions/dltune.\n\n";
  out += "_dltune_builtin_profiles=" + shell_quote(text::join(words.profiles, " ")) + "\n";
  out += "_dltune_builtin_ids=" + shell_quote(text::join(words.setting_ids, " ")) + "\n\n";

  out += "# The subcommands of command $1 (\"\" for dltune's commands).\n";
  out += "_dltune_commands() {\n  case $1 in\n";
  for (const auto& c : model)
    if (!c.subcommands.empty())
      out += fmt::format("    {}) _dltune_reply={} ;;\n", shell_quote(c.path),
                         shell_quote(text::join(c.subcommands, " ")));
  out += "    *) _dltune_reply='' ;;\n  esac\n}\n\n";

  out += "# The options of command $1.\n_dltune_options() {\n  case $1 in\n";
  for (const auto& c : model) {
    std::vector<std::string> names;
    for (const auto& o : c.options) names.insert(names.end(), o.names.begin(), o.names.end());
    if (!names.empty())
      out += fmt::format("    {}) _dltune_reply={} ;;\n", shell_quote(c.path),
                         shell_quote(text::join(names, " ")));
  }
  out += "    *) _dltune_reply='' ;;\n  esac\n}\n\n";

  out +=
      "# What the value of option $2 of command $1 completes to (\"#\": its arguments); \"\" for a "
      "flag.\n_dltune_value() {\n  case \"$1 $2\" in\n";
  for (const auto& c : model) {
    for (const auto& o : c.options) {
      const auto kind = kind_word(o);
      if (kind.empty()) continue;
      std::vector<std::string> keys;
      for (const auto& n : o.names) keys.push_back(shell_quote(c.path + " " + n));
      out += fmt::format("    {}) _dltune_reply={} ;;\n", text::join(keys, "|"), shell_quote(kind));
    }
    if (c.positional)
      out += fmt::format("    {}) _dltune_reply={} ;;\n", shell_quote(c.path + " #"),
                         shell_quote(kind_word(*c.positional)));
  }
  out += "    *) _dltune_reply='' ;;\n  esac\n}\n\n";

  out += "# Whether command $1 runs a job: `dltune $1 [OPTIONS] -- COMMAND...`.\n";
  out += "_dltune_job() {\n  case $1 in\n";
  std::vector<std::string> jobs;
  for (const auto& c : model)
    if (c.job_command) jobs.push_back(shell_quote(c.path));
  if (!jobs.empty()) out += "    " + text::join(jobs, "|") + ") return 0 ;;\n";
  out += "  esac\n  return 1\n}\n";
  return out + kBashFunctions;
}

}  // namespace dltune::options

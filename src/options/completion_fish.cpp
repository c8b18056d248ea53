// The fish script: a function that finds the command being typed (skipping options' values),
// and one `complete` line per subcommand, option and argument, each under the condition that
// the command being typed is its command.
#include <fmt/core.h>

#include "core/text.hpp"
#include "options/completion.hpp"

namespace dltune::options {

namespace {

// A fish single-quoted string.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string words_of(const std::vector<std::string>& list) {
  std::vector<std::string> q;
  for (const auto& w : list) q.push_back(quoted(w));
  return text::join(q, " ");
}

// The arguments of `complete` that complete a value of kind `o.kind`; `option` when it is an
// option's (which then requires it).
std::string value_arguments(const CompletedOption& o, bool option) {
  const std::string takes = option ? "-x " : "";
  switch (o.kind) {
    case ValueKind::kFlag:
      return "";
    case ValueKind::kAny:
      return option ? "-x" : "";
    case ValueKind::kWords:
      return takes + "-a " + quoted(text::join(o.words, " "));
    case ValueKind::kProfile:
      return takes + "-a '(__dltune_profiles)'";
    case ValueKind::kSettingId:
      return takes + "-a '(__dltune_ids)'";
    case ValueKind::kGpu:
      return takes + "-a '(__dltune_gpus)'";
    case ValueKind::kRecording:
      return takes + "-a '(__dltune_recordings)'";
    case ValueKind::kFile:
      return option ? "-r -F" : "-F";
    case ValueKind::kDirectory:
      return takes + "-a '(__fish_complete_directories)'";
  }
  return "";
}

constexpr const char* kFishFunctions = R"FISH(
# The command being typed ("tune apply"): the known command words, options' values skipped;
# "PATH --" after the "--" of a command that runs a job.
function __dltune_path
    set -l words (commandline -opc)
    set -e words[1]
    set -l path ''
    set -l skip 0
    for w in $words
        if test $skip = 1
            set skip 0
            continue
        end
        if test "$w" = --; and __dltune_job "$path"
            echo "$path --"
            return
        end
        switch $w
            case '-*=*'
            case '-*'
                set -l kind (__dltune_value "$path" $w)
                test -n "$kind"; and set skip 1
            case '*'
                if contains -- $w (__dltune_commands "$path")
                    set path (string trim -- "$path $w")
                end
        end
    end
    echo $path
end

# The same, worked out once per command line.
function __dltune_current
    set -l key (string join ' ' -- (commandline -opc))
    if not set -q __dltune_key; or test "$__dltune_key" != "$key"
        set -g __dltune_key $key
        set -g __dltune_current_path (__dltune_path)
    end
    echo $__dltune_current_path
end

function __dltune_at --argument-names want
    set -l path (__dltune_current)
    test "$path" = "$want"
end

function __dltune_in_job
    set -l path (__dltune_current)
    string match -q -- '* --' "$path"
end

# The job's command after "--", completed as that command.
function __dltune_job_complete
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words)
    set -e words[1..$at]
    complete -C (string join ' ' -- (string escape -- $words) (commandline -ct))
end

# The current token's list so far ("vm.swappiness," of --only vm.swappiness,vm.d).
function __dltune_list_before
    commandline -ct | string replace -r -- '^-[^=]*=' '' | string match -r -- '^.*,'
end

# Recordings: *.db files, and directories that may hold them.
function __dltune_recordings
    __fish_complete_suffix .db | string match -r -- '^[^\t]*(?:\.db|/)(?:\t.*)?$'
end

function __dltune_profiles
    printf '%s\n' $__dltune_builtin_profiles
    for f in /etc/dltune/profiles/*.toml
        string replace -r -- '^.*/(.*)\.toml$' '$1' $f
    end
    if string match -q -r -- '[/.]' (commandline -ct)
        __fish_complete_suffix .toml
    end
end

function __dltune_ids
    set -l before (__dltune_list_before)
    set -l ids $__dltune_builtin_ids
    set -l files /etc/dltune/profiles/*.toml
    if set -q files[1]
        set -a ids (sed -n 's/^[[:space:]]*\[settings\."\([^"]*\)"\].*/\1/p' $files 2>/dev/null)
    end
    for id in $ids
        echo "$before$id"
    end
end

# GPU indexes: one per GPU the NVIDIA driver lists, else nvidia-smi's; none without either.
function __dltune_gpus
    set -l before (__dltune_list_before)
    set -l gpus
    set -l dirs /proc/driver/nvidia/gpus/*
    if set -q dirs[1]
        set gpus (seq 0 (math (count $dirs) - 1))
    else if command -q nvidia-smi
        set gpus (nvidia-smi -L 2>/dev/null | string replace -rf -- '^GPU (\d+):.*' '$1')
    end
    for g in $gpus
        echo "$before$g"
    end
end

complete -c dltune -f
complete -c dltune -n __dltune_in_job -x -a '(__dltune_job_complete)'
)FISH";

}  // namespace

std::string fish_completion(const std::vector<CompletedCommand>& model,
                            const CompletionWords& words) {
  std::string out =
      "# fish completion for dltune. Made by `dltune completion fish` (dltune " DLTUNE_VERSION
      ") from its\n"
      "# command definitions: do not edit. Load it with `dltune completion fish | source`, or "
      "install it\n"
      "# as /usr/share/fish/vendor_completions.d/dltune.fish.\n\n";
  out += "set -g __dltune_builtin_profiles " + words_of(words.profiles) + "\n";
  out += "set -g __dltune_builtin_ids " + words_of(words.setting_ids) + "\n\n";

  out += "# The subcommands of command $argv[1] (\"\" for dltune's commands).\n";
  out += "function __dltune_commands\n    switch \"$argv[1]\"\n";
  for (const auto& c : model)
    if (!c.subcommands.empty())
      out += "        case " + quoted(c.path) + "\n            printf '%s\\n' " +
             words_of(c.subcommands) + "\n";
  out += "    end\nend\n\n";

  out +=
      "# What the value of option $argv[2] of command $argv[1] completes to; nothing for a flag.\n";
  out += "function __dltune_value\n    switch \"$argv[1] $argv[2]\"\n";
  for (const auto& c : model)
    for (const auto& o : c.options) {
      if (o.kind == ValueKind::kFlag) continue;
      std::vector<std::string> keys;
      for (const auto& n : o.names) keys.push_back(quoted(c.path + " " + n));
      out += "        case " + text::join(keys, " ") + "\n            echo value\n";
    }
  out += "    end\nend\n\n";

  std::vector<std::string> jobs;
  for (const auto& c : model)
    if (c.job_command) jobs.push_back(quoted(c.path));
  out += "function __dltune_job\n    contains -- \"$argv[1]\" " + text::join(jobs, " ") + "\nend\n";
  out += kFishFunctions;

  for (const auto& c : model) {
    // Command paths are words of letters and hyphens: quoted as they are.
    const std::string at = "complete -c dltune -n \"__dltune_at '" + c.path + "'\"";
    out += "\n# dltune" + (c.path.empty() ? "" : " " + c.path) + "\n";
    for (const auto& s : c.subcommands) {
      const auto* sub =
          find_completed(model, c.path == "help" ? s : (c.path.empty() ? s : c.path + " " + s));
      out += at + " -a " + quoted(s) + " -d " + quoted(sub != nullptr ? sub->summary : s) + "\n";
    }
    for (const auto& o : c.options) {
      std::string line = at;
      for (const auto& n : o.names)
        line += n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1);
      const auto value = value_arguments(o, true);
      if (!value.empty()) line += " " + value;
      out += line + " -d " + quoted(o.help) + "\n";
    }
    if (c.positional) {
      const auto value = value_arguments(*c.positional, false);
      if (!value.empty()) out += at + " " + value + " -d " + quoted(c.positional->help) + "\n";
    }
  }
  return out;
}

}  // namespace dltune::options

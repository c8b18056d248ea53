# zsh -f tests/support/zsh_complete.zsh SCRIPT LINE [source]
#
# Prints what zsh completes LINE<TAB> to, one match a line. SCRIPT (a file named _dltune) is
# autoloaded from its directory through $fpath, as an installed completion is; with `source`, it
# is sourced after compinit instead, as `source <(dltune completion zsh)` does. An interactive
# zsh runs in a pseudo-terminal (zpty), with compadd wrapped to print each match rather than
# insert it, and exits when the completion is done. Exit 2 when no completion came in 15 s.
zmodload zsh/zpty || { print -u2 'zsh_complete.zsh: no zsh/zpty module'; exit 3 }
script=$1 line=$2 how=$3
zpty z zsh -f -i
zpty -w z "PROMPT= ; RPROMPT= ; fpath=(${(q)script:h} \$fpath)"
zpty -w z 'autoload -Uz compinit; compinit -u -D'
[[ $how == source ]] && zpty -w z "source ${(q)script}"
zpty -w z 'bindkey "^I" complete-word; zstyle ":completion:*" insert-tab false'
# The wrapper adds the matches too: what a completer tries next depends on what was found
# (_files offers all files only when no *.db matched).
zpty -w z 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  builtin compadd "$@"
  local h; for h in $__hits; do echo -E - "=""=HIT=""=$IPREFIX$h"; done
}'
zpty -w z 'capture-done() { echo -E - "CAPTURE""-DONE"; exit }; comppostfuncs=(capture-done)'
zpty -w -n z "$line"$'\t'
typeset out chunk
integer deadline=$(( SECONDS + 15 ))
while (( SECONDS < deadline )); do
  if zpty -rt z chunk; then
    out+=$chunk
    [[ $out == *CAPTURE-DONE$'\r'* ]] && break
  else
    sleep 0.05
  fi
done
zpty -d z
if [[ $out != *CAPTURE-DONE$'\r'* ]]; then
  print -u2 "zsh_complete.zsh: no completion within 15 s"
  exit 2
fi
print -r -- ${out//$'\r'/} | sed -n "s/^.*==HIT==//p"

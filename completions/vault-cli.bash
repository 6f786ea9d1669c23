# Generated from src/commands/table.ts by `vault-cli completion`; do not edit.
# bash: source it, or install it as vault-cli in bash-completion's completions directory.
__vault_cli_words() {
  local w
  while IFS= read -r w; do COMPREPLY+=("$w"); done < <(compgen -W "$1" -- "$cur")
}
__vault_cli_files() {
  compopt -o filenames 2>/dev/null
  local IFS=$'\n'
  COMPREPLY+=($(compgen -f -- "$cur"))
}
# Names only for the owner on an unlocked terminal (vault-cli unlock): never a prompt.
__vault_cli_names() {
  local names n want="$cur" quoted=
  names=$(VAULT_NO_PROMPT=1 command vault-cli "$1" ls --json 2>/dev/null </dev/null | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{try{for(const e of JSON.parse(s))console.log(e.name)}catch{}})' 2>/dev/null)
  # Names hold spaces ("Stripe Prod"): match what the word means so far, and insert
  # a name quoted for the shell, unless the word opened a quote (readline closes it).
  case "$want" in
    \'*) quoted=1; want=${want#\'} ;;
    \"*) quoted=1; want=${want#\"} ;;
    *) want=${want//\\/} ;;
  esac
  while IFS= read -r n; do
    [[ -n "$n" && "$n" == "$want"* ]] || continue
    if [[ -n "$quoted" ]]; then COMPREPLY+=("$n"); else COMPREPLY+=("$(printf %q "$n")"); fi
  done <<<"$names"
}
# The command a line names: the longest path of the table its leading words match.
__vault_cli_command() {
  case "$1 $2" in
    'proxy env') echo 'proxy env'; return ;;
    'proxy ca') echo 'proxy ca'; return ;;
    'held restore') echo 'held restore'; return ;;
    'vault create') echo 'vault create'; return ;;
    'vault migrate') echo 'vault migrate'; return ;;
    'vault passwd') echo 'vault passwd'; return ;;
    'vault backup') echo 'vault backup'; return ;;
    'vault check') echo 'vault check'; return ;;
    'vault restore') echo 'vault restore'; return ;;
    'vault rekey') echo 'vault rekey'; return ;;
    'entry set') echo 'entry set'; return ;;
    'entry rm') echo 'entry rm'; return ;;
    'entry show') echo 'entry show'; return ;;
    'entry ls') echo 'entry ls'; return ;;
    'entry exposed') echo 'entry exposed'; return ;;
    'entry hosts') echo 'entry hosts'; return ;;
    'entry import-ssh') echo 'entry import-ssh'; return ;;
    'agent add') echo 'agent add'; return ;;
    'agent ls') echo 'agent ls'; return ;;
    'agent show') echo 'agent show'; return ;;
    'agent wrap') echo 'agent wrap'; return ;;
    'agent scope') echo 'agent scope'; return ;;
    'agent limits') echo 'agent limits'; return ;;
    'agent caveats') echo 'agent caveats'; return ;;
    'agent group') echo 'agent group'; return ;;
    'agent lock') echo 'agent lock'; return ;;
    'agent unlock') echo 'agent unlock'; return ;;
    'agent revoke') echo 'agent revoke'; return ;;
    'key add') echo 'key add'; return ;;
    'key ls') echo 'key ls'; return ;;
    'key rm') echo 'key rm'; return ;;
    'audit archive') echo 'audit archive'; return ;;
    'completion install') echo 'completion install'; return ;;
    'daemon stop') echo 'daemon stop'; return ;;
    'daemon status') echo 'daemon status'; return ;;
    'host install') echo 'host install'; return ;;
    'host uninstall') echo 'host uninstall'; return ;;
    'host status') echo 'host status'; return ;;
  esac
  case "$1" in
    'init') echo 'init' ;;
    'get') echo 'get' ;;
    'totp') echo 'totp' ;;
    'proxy') echo 'proxy' ;;
    'ssh-agent') echo 'ssh-agent' ;;
    'render') echo 'render' ;;
    'exec') echo 'exec' ;;
    'git-credential') echo 'git-credential' ;;
    'run') echo 'run' ;;
    'held') echo 'held' ;;
    'unlock') echo 'unlock' ;;
    'lock') echo 'lock' ;;
    'dashboard') echo 'dashboard' ;;
    'import') echo 'import' ;;
    'sweep') echo 'sweep' ;;
    'audit') echo 'audit' ;;
    'shell-init') echo 'shell-init' ;;
    'completion') echo 'completion' ;;
    'doctor') echo 'doctor' ;;
    'daemon') echo 'daemon' ;;
    'help') echo 'help' ;;
  esac
}
_vault_cli() {
  # Under zsh (bashcompinit), arrays count from 0 as in bash.
  [[ -n "${ZSH_VERSION:-}" ]] && setopt localoptions ksharrays
  COMPREPLY=()
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
  local -a lead=()
  local i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && break
    lead+=("$w")
  done
  if [[ ${#lead[@]} -eq $((COMP_CWORD - 1)) && "$cur" != -* ]]; then
    case ${#lead[@]} in
      0) __vault_cli_words 'init get totp proxy ssh-agent render exec git-credential run held unlock lock dashboard vault entry import agent key sweep audit shell-init completion doctor daemon host help'; return 0 ;;
      1)
        case "${lead[0]}" in
          'proxy') __vault_cli_words 'env ca'; return 0 ;;
          'held') __vault_cli_words 'restore'; return 0 ;;
          'vault') __vault_cli_words 'create migrate passwd backup check restore rekey'; return 0 ;;
          'entry') __vault_cli_words 'set rm show ls exposed hosts import-ssh'; return 0 ;;
          'agent') __vault_cli_words 'add ls show wrap scope limits caveats group lock unlock revoke'; return 0 ;;
          'key') __vault_cli_words 'add ls rm'; return 0 ;;
          'audit') __vault_cli_words 'archive'; return 0 ;;
          'completion') __vault_cli_words 'install bash zsh fish'; return 0 ;;
          'daemon') __vault_cli_words 'stop status'; return 0 ;;
          'host') __vault_cli_words 'install uninstall status'; return 0 ;;
        esac ;;
    esac
  fi
  local cmd
  cmd=$(__vault_cli_command "${lead[@]:0:2}")
  [[ -n "$cmd" ]] || return 0
  local -a words=(${cmd})
  local n=${#words[@]}
  # A flag waiting for its value.
  if [[ "$prev" == --* && $COMP_CWORD -gt $n ]]; then
    case "$cmd $prev" in
      'init --skill') __vault_cli_words 'claude codex cursor gemini agents'; return 0 ;;
      'get --field') __vault_cli_words 'password key private_key secret_key token totp'; return 0 ;;
      'proxy --port') :; return 0 ;;
      'proxy --upstream-ca') __vault_cli_files; return 0 ;;
      'proxy env --port') :; return 0 ;;
      'proxy env --aws') :; return 0 ;;
      'ssh-agent --socket') __vault_cli_files; return 0 ;;
      'render --format') __vault_cli_words 'json yaml toml env raw'; return 0 ;;
      'exec --env') :; return 0 ;;
      'git-credential --entry') :; return 0 ;;
      'git-credential --field') __vault_cli_words 'password key private_key secret_key token totp'; return 0 ;;
      'git-credential --username') :; return 0 ;;
      'run --agent') __vault_cli_names agent; return 0 ;;
      'run --scope') __vault_cli_names entry; return 0 ;;
      'run --keep-env') :; return 0 ;;
      'run --upstream-ca') __vault_cli_files; return 0 ;;
      'run --profile') :; return 0 ;;
      'run --model-key') __vault_cli_names entry; return 0 ;;
      'run --allow-write') __vault_cli_files; return 0 ;;
      'run --allow-read') __vault_cli_files; return 0 ;;
      'run --aws') :; return 0 ;;
      'run --allow-net') :; return 0 ;;
      'run --max-procs') :; return 0 ;;
      'run --ssh') __vault_cli_names entry; return 0 ;;
      'unlock --for') :; return 0 ;;
      'unlock --idle') :; return 0 ;;
      'vault create --store') :; return 0 ;;
      'vault migrate --to') :; return 0 ;;
      'entry set --field') __vault_cli_words 'password key private_key secret_key token totp'; return 0 ;;
      'entry set --tier') :; return 0 ;;
      'entry show --field') __vault_cli_words 'password key private_key secret_key token totp'; return 0 ;;
      'import --from') __vault_cli_words 'dotenv 1pux 1password-csv pass'; return 0 ;;
      'import --prefix') :; return 0 ;;
      'import --field') __vault_cli_words 'password key private_key secret_key token totp'; return 0 ;;
      'import --entry') :; return 0 ;;
      'import --tier') :; return 0 ;;
      'agent add --scope') __vault_cli_names entry; return 0 ;;
      'agent add --kind') __vault_cli_words 'ai script'; return 0 ;;
      'agent add --per-minute') :; return 0 ;;
      'agent add --per-hour') :; return 0 ;;
      'agent add --values-per-minute') :; return 0 ;;
      'agent wrap --command') :; return 0 ;;
      'agent scope --add') __vault_cli_names entry; return 0 ;;
      'agent scope --rm') __vault_cli_names entry; return 0 ;;
      'agent limits --per-minute') :; return 0 ;;
      'agent limits --per-hour') :; return 0 ;;
      'agent limits --values-per-minute') :; return 0 ;;
      'agent unlock --port') :; return 0 ;;
      'agent revoke --id') :; return 0 ;;
      'key add --name') :; return 0 ;;
      'key add --port') :; return 0 ;;
      'sweep --path') __vault_cli_files; return 0 ;;
      'sweep --since') :; return 0 ;;
      'sweep --backup') __vault_cli_files; return 0 ;;
      'sweep --open-backup') __vault_cli_files; return 0 ;;
      'sweep --max-file-size') :; return 0 ;;
      'audit --agent') __vault_cli_names agent; return 0 ;;
      'audit --since') :; return 0 ;;
      'audit --archive') __vault_cli_files; return 0 ;;
      'audit archive --before') :; return 0 ;;
      'host install --user') :; return 0 ;;
      'host install --group') :; return 0 ;;
      'host install --state-dir') __vault_cli_files; return 0 ;;
      'host install --socket-dir') __vault_cli_files; return 0 ;;
      'host install --member') :; return 0 ;;
      'host install --move') __vault_cli_files; return 0 ;;
      'host uninstall --move-to') __vault_cli_files; return 0 ;;
      'host uninstall --owner') :; return 0 ;;
    esac
  fi
  if [[ "$cur" == -* ]]; then
    case "$cmd" in
      'init') __vault_cli_words '--skill --no-skill --help' ;;
      'get') __vault_cli_words '--field --help' ;;
      'totp') __vault_cli_words '--help' ;;
      'proxy') __vault_cli_words '--port --upstream-ca --help' ;;
      'proxy env') __vault_cli_words '--port --no-local-bypass --aws --help' ;;
      'proxy ca') __vault_cli_words '--help' ;;
      'ssh-agent') __vault_cli_words '--socket --help' ;;
      'render') __vault_cli_words '--format --raw --watch --help' ;;
      'exec') __vault_cli_words '--env --keep-vault-env --help' ;;
      'git-credential') __vault_cli_words '--entry --field --username --help' ;;
      'run') __vault_cli_words '--agent --scope --keep-env --upstream-ca --profile --model-key --print-policy --allow-write --allow-read --aws --allow-net --max-procs --no-sandbox --ssh --allow-title --no-pty --no-browser --help' ;;
      'held') __vault_cli_words '--help' ;;
      'held restore') __vault_cli_words '--help' ;;
      'unlock') __vault_cli_words '--for --idle --help' ;;
      'lock') __vault_cli_words '--help' ;;
      'dashboard') __vault_cli_words '--no-browser --help' ;;
      'vault create') __vault_cli_words '--store --help' ;;
      'vault migrate') __vault_cli_words '--to --json --help' ;;
      'vault passwd') __vault_cli_words '--recovery --help' ;;
      'vault backup') __vault_cli_words '--json --help' ;;
      'vault check') __vault_cli_words '--json --help' ;;
      'vault restore') __vault_cli_words '--yes --dry-run --json --help' ;;
      'vault rekey') __vault_cli_words '--help' ;;
      'entry set') __vault_cli_words '--field --tier --help' ;;
      'entry rm') __vault_cli_words '--help' ;;
      'entry show') __vault_cli_words '--json --reveal --field --help' ;;
      'entry ls') __vault_cli_words '--json --help' ;;
      'entry exposed') __vault_cli_words '--json --help' ;;
      'entry hosts') __vault_cli_words '--clear --help' ;;
      'entry import-ssh') __vault_cli_words '--help' ;;
      'import') __vault_cli_words '--from --dry-run --overwrite --skip-existing --prefix --field --entry --tier --json --help' ;;
      'agent add') __vault_cli_words '--scope --kind --per-minute --per-hour --values-per-minute --help' ;;
      'agent ls') __vault_cli_words '--json --help' ;;
      'agent show') __vault_cli_words '--json --help' ;;
      'agent wrap') __vault_cli_words '--command --rm --help' ;;
      'agent scope') __vault_cli_words '--add --rm --help' ;;
      'agent limits') __vault_cli_words '--per-minute --per-hour --values-per-minute --help' ;;
      'agent caveats') __vault_cli_words '--clear --help' ;;
      'agent group') __vault_cli_words '--json --help' ;;
      'agent lock') __vault_cli_words '--help' ;;
      'agent unlock') __vault_cli_words '--no-browser --port --help' ;;
      'agent revoke') __vault_cli_words '--id --help' ;;
      'key add') __vault_cli_words '--name --recovery --no-browser --port --help' ;;
      'key ls') __vault_cli_words '--json --help' ;;
      'key rm') __vault_cli_words '--help' ;;
      'sweep') __vault_cli_words '--path --paths-only --since --stored --redact --backup --open-backup --watch --max-file-size --json --help' ;;
      'audit') __vault_cli_words '--json --agent --since --follow --verify --archive --help' ;;
      'audit archive') __vault_cli_words '--before --help' ;;
      'shell-init') __vault_cli_words '--help' ;;
      'completion') __vault_cli_words '--help' ;;
      'completion install') __vault_cli_words '--rc --help' ;;
      'doctor') __vault_cli_words '--help' ;;
      'daemon') __vault_cli_words '--help' ;;
      'daemon stop') __vault_cli_words '--help' ;;
      'daemon status') __vault_cli_words '--json --help' ;;
      'host install') __vault_cli_words '--user --group --state-dir --socket-dir --member --move --no-systemd --help' ;;
      'host uninstall') __vault_cli_words '--move-to --owner --purge --help' ;;
      'host status') __vault_cli_words '--json --help' ;;
      'help') __vault_cli_words '--help' ;;
    esac
    return 0
  fi
  # Which argument this word is: words after the command, less flags and their values.
  local pos=0 valued
  case "$cmd" in
    'init') valued=' --skill ' ;;
    'get') valued=' --field ' ;;
    'totp') valued='  ' ;;
    'proxy') valued=' --port --upstream-ca ' ;;
    'proxy env') valued=' --port --aws ' ;;
    'proxy ca') valued='  ' ;;
    'ssh-agent') valued=' --socket ' ;;
    'render') valued=' --format ' ;;
    'exec') valued=' --env ' ;;
    'git-credential') valued=' --entry --field --username ' ;;
    'run') valued=' --agent --scope --keep-env --upstream-ca --profile --model-key --allow-write --allow-read --aws --allow-net --max-procs --ssh ' ;;
    'held') valued='  ' ;;
    'held restore') valued='  ' ;;
    'unlock') valued=' --for --idle ' ;;
    'lock') valued='  ' ;;
    'dashboard') valued='  ' ;;
    'vault create') valued=' --store ' ;;
    'vault migrate') valued=' --to ' ;;
    'vault passwd') valued='  ' ;;
    'vault backup') valued='  ' ;;
    'vault check') valued='  ' ;;
    'vault restore') valued='  ' ;;
    'vault rekey') valued='  ' ;;
    'entry set') valued=' --field --tier ' ;;
    'entry rm') valued='  ' ;;
    'entry show') valued=' --field ' ;;
    'entry ls') valued='  ' ;;
    'entry exposed') valued='  ' ;;
    'entry hosts') valued='  ' ;;
    'entry import-ssh') valued='  ' ;;
    'import') valued=' --from --prefix --field --entry --tier ' ;;
    'agent add') valued=' --scope --kind --per-minute --per-hour --values-per-minute ' ;;
    'agent ls') valued='  ' ;;
    'agent show') valued='  ' ;;
    'agent wrap') valued=' --command ' ;;
    'agent scope') valued=' --add --rm ' ;;
    'agent limits') valued=' --per-minute --per-hour --values-per-minute ' ;;
    'agent caveats') valued='  ' ;;
    'agent group') valued='  ' ;;
    'agent lock') valued='  ' ;;
    'agent unlock') valued=' --port ' ;;
    'agent revoke') valued=' --id ' ;;
    'key add') valued=' --name --port ' ;;
    'key ls') valued='  ' ;;
    'key rm') valued='  ' ;;
    'sweep') valued=' --path --since --backup --open-backup --max-file-size ' ;;
    'audit') valued=' --agent --since --archive ' ;;
    'audit archive') valued=' --before ' ;;
    'shell-init') valued='  ' ;;
    'completion') valued='  ' ;;
    'completion install') valued='  ' ;;
    'doctor') valued='  ' ;;
    'daemon') valued='  ' ;;
    'daemon stop') valued='  ' ;;
    'daemon status') valued='  ' ;;
    'host install') valued=' --user --group --state-dir --socket-dir --member --move ' ;;
    'host uninstall') valued=' --move-to --owner ' ;;
    'host status') valued='  ' ;;
    'help') valued='  ' ;;
  esac
  for ((i = n + 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    if [[ "$w" == --* ]]; then
      [[ "$valued" == *" $w "* ]] && ((i++))
    else
      ((pos++))
    fi
  done
  case "$cmd $pos" in
    'get 0') : ;;
    'totp 0') : ;;
    'render 0') __vault_cli_files ;;
    'git-credential 0') __vault_cli_words 'get store erase' ;;
    'held 0') : ;;
    'held restore 0') : ;;
    'held restore 1') __vault_cli_files ;;
    'vault backup 0') __vault_cli_files ;;
    'vault restore 0') __vault_cli_files ;;
    'entry set 0') __vault_cli_names entry ;;
    'entry rm 0') __vault_cli_names entry ;;
    'entry show 0') __vault_cli_names entry ;;
    'entry hosts 0') __vault_cli_names entry ;;
    'entry import-ssh 0') __vault_cli_names entry ;;
    'entry import-ssh 1') __vault_cli_files ;;
    'import 0') __vault_cli_files ;;
    'agent add 0') : ;;
    'agent show 0') __vault_cli_names agent ;;
    'agent wrap 0') __vault_cli_names agent ;;
    'agent scope 0') __vault_cli_names agent ;;
    'agent limits 0') __vault_cli_names agent ;;
    'agent caveats 0') __vault_cli_names agent ;;
    'agent caveats 1') __vault_cli_names entry ;;
    'agent group 0') __vault_cli_names agent ;;
    'agent group 1') : ;;
    'agent lock 0') __vault_cli_names agent ;;
    'agent unlock 0') __vault_cli_names agent ;;
    'agent revoke 0') __vault_cli_names agent ;;
    'key rm 0') : ;;
    'audit archive 0') __vault_cli_files ;;
    'shell-init 0') __vault_cli_words 'bash zsh fish' ;;
    'completion 0') __vault_cli_words 'bash zsh fish' ;;
    'completion install 0') __vault_cli_words 'bash zsh fish' ;;
  esac
  return 0
}
complete -F _vault_cli vault-cli

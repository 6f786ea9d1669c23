# Generated from src/core/commands.ts by `vault-cli completion`; do not edit.
# fish: install as ~/.config/fish/completions/vault-cli.fish.

# The command the line names: the longest path of the table its leading words match.
function __vault_cli_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l lead
    for w in $words
        string match -q -- '-*' $w; and break
        set -a lead $w
    end
    set -l known 'init' 'get' 'totp' 'proxy' 'proxy env' 'proxy ca' 'render' 'run' 'dashboard' 'vault create' 'vault passwd' 'vault backup' 'vault check' 'vault restore' 'vault rekey' 'entry set' 'entry rm' 'entry show' 'entry ls' 'entry hosts' 'agent add' 'agent ls' 'agent show' 'agent wrap' 'agent scope' 'agent limits' 'agent lock' 'agent unlock' 'agent revoke' 'key add' 'key ls' 'key rm' 'audit' 'audit archive' 'shell-init' 'completion' 'daemon' 'daemon stop' 'daemon status' 'host install' 'host uninstall' 'host status' 'help'
    if test (count $lead) -ge 2; and contains -- "$lead[1] $lead[2]" $known
        echo "$lead[1] $lead[2]"
    else if test (count $lead) -ge 1; and contains -- "$lead[1]" $known
        echo "$lead[1]"
    end
end
function __vault_cli_is
    set -l c (__vault_cli_command)
    test "$c" = "$argv"
end
# True while the line is still naming the command: leading words only, as many as given.
function __vault_cli_lead
    set -l words (commandline -opc)
    set -e words[1]
    for w in $words
        string match -q -- '-*' $w; and return 1
    end
    test (count $words) -eq $argv[1]; or return 1
    test $argv[1] -eq 0; or test "$words[1]" = "$argv[2]"
end
# Names only for the owner with a passphrase file: an agent never lists entries.
function __vault_cli_names
    set -q VAULT_PASSPHRASE_FILE; or return 0
    command vault-cli $argv[1] ls --json 2>/dev/null </dev/null | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{try{for(const e of JSON.parse(s))console.log(e.name)}catch{}})' 2>/dev/null
end

complete -c vault-cli -f
complete -c vault-cli -n '__vault_cli_lead 0' -a 'init' -d 'store this agent’s token (read from stdin or a prompt)'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'get' -d 'print one field of an entry into a pipe'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'totp' -d 'print the current one-time code of an entry into a pipe'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'proxy' -d 'run the reference-resolving HTTPS proxy on 127.0.0.1 (default port 1983)'
complete -c vault-cli -n '__vault_cli_lead 1 proxy' -a 'env' -d 'print the shell lines that route a tool through the proxy'
complete -c vault-cli -n '__vault_cli_lead 1 proxy' -a 'ca' -d 'print the path of the proxy’s CA certificate'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'render' -d 'print a template with every vault:// reference replaced, into a pipe'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'run' -d 'run a command as an agent under a session token that dies with it'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'dashboard' -d 'the live dashboard of agents, reads and lockdowns, and the vault UI'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'vault' -d 'vault commands'
complete -c vault-cli -n '__vault_cli_lead 1 vault' -a 'create' -d 'create a new vault (prints a recovery key once)'
complete -c vault-cli -n '__vault_cli_lead 1 vault' -a 'passwd' -d 'change the owner passphrase'
complete -c vault-cli -n '__vault_cli_lead 1 vault' -a 'backup' -d 'write a consistent, encrypted copy of the vault to a file, atomically'
complete -c vault-cli -n '__vault_cli_lead 1 vault' -a 'check' -d 'verify every record, seal, index row and the audit chain; exit 74 on damage'
complete -c vault-cli -n '__vault_cli_lead 1 vault' -a 'restore' -d 'replace the vault by a backup, after showing what it would roll back'
complete -c vault-cli -n '__vault_cli_lead 1 vault' -a 'rekey' -d 'make a new root key and print a new recovery key (the old one stops working)'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'entry' -d 'entry commands'
complete -c vault-cli -n '__vault_cli_lead 1 entry' -a 'set' -d 'create an entry or rotate one of its fields (value from stdin or a prompt)'
complete -c vault-cli -n '__vault_cli_lead 1 entry' -a 'rm' -d 'remove an entry'
complete -c vault-cli -n '__vault_cli_lead 1 entry' -a 'show' -d 'show an entry’s fields and metadata; --reveal prints one field’s value'
complete -c vault-cli -n '__vault_cli_lead 1 entry' -a 'ls' -d 'list entries'
complete -c vault-cli -n '__vault_cli_lead 1 entry' -a 'hosts' -d 'bind an entry to the hosts the proxy may send it to (--clear: any host)'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'agent' -d 'agent commands'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'add' -d 'create an agent and print its token'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'ls' -d 'list agents'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'show' -d 'show an agent’s scope, limits, state and current reads'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'wrap' -d 'make shell-init wrap a command so it runs under run --agent <name>'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'scope' -d 'add entries to or remove them from an agent’s scope'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'limits' -d 'change an agent’s rate limits'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'lock' -d 'lock an agent now'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'unlock' -d 'lift an agent’s lockdown with an enrolled hardware key (WebAuthn, in a browser)'
complete -c vault-cli -n '__vault_cli_lead 1 agent' -a 'revoke' -d 'revoke an agent’s token for good'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'key' -d 'key commands'
complete -c vault-cli -n '__vault_cli_lead 1 key' -a 'add' -d 'enrol a hardware key (FIDO2, in a browser); enrol two'
complete -c vault-cli -n '__vault_cli_lead 1 key' -a 'ls' -d 'list enrolled hardware keys'
complete -c vault-cli -n '__vault_cli_lead 1 key' -a 'rm' -d 'remove an enrolled hardware key'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'audit' -d 'print the audit log'
complete -c vault-cli -n '__vault_cli_lead 1 audit' -a 'archive' -d 'move the records older than a date into a sealed archive file'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'shell-init' -d 'print the lines to eval in a shell: completion and the agent wrappers'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'completion' -d 'print the shell completion script for bash, zsh or fish'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'daemon' -d 'run the vault host in the foreground'
complete -c vault-cli -n '__vault_cli_lead 1 daemon' -a 'stop' -d 'stop the running vault host'
complete -c vault-cli -n '__vault_cli_lead 1 daemon' -a 'status' -d 'say whether a vault host is running (exit 3 when none)'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'host' -d 'host commands'
complete -c vault-cli -n '__vault_cli_lead 1 host' -a 'install' -d 'as root: run the vault host as its own system user (hardened mode)'
complete -c vault-cli -n '__vault_cli_lead 1 host' -a 'uninstall' -d 'as root: undo `host install` (the store moves out or is purged)'
complete -c vault-cli -n '__vault_cli_lead 1 host' -a 'status' -d 'say which mode is in use (same-user or hardened) and whether the host runs'
complete -c vault-cli -n '__vault_cli_lead 0' -a 'help' -d 'show the help of a command or a group (the same as <command> --help)'
complete -c vault-cli -n '__vault_cli_is init' -l skill -x -a 'claude codex cursor gemini agents' -d 'install the guardrail skill for this agent only (created if absent)'
complete -c vault-cli -n '__vault_cli_is init' -l no-skill -d 'do not install the guardrail skill for coding agents'
complete -c vault-cli -n '__vault_cli_is init' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is get' -l field -x -a 'password key private_key secret_key token totp' -d 'field name (default: password)'
complete -c vault-cli -n '__vault_cli_is get' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is totp' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is proxy' -l port -x -d 'port (default 1983)'
complete -c vault-cli -n '__vault_cli_is proxy' -l upstream-ca -r -F -d 'also trust this PEM file for upstream servers (tests, private CAs)'
complete -c vault-cli -n '__vault_cli_is proxy' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is proxy env' -l port -x -d 'port (default 1983)'
complete -c vault-cli -n '__vault_cli_is proxy env' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is proxy ca' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is render' -l format -x -a 'json yaml toml env raw' -d 'how values are escaped (default: by the file’s extension)'
complete -c vault-cli -n '__vault_cli_is render' -l raw -d 'insert values as they are (same as --format raw)'
complete -c vault-cli -n '__vault_cli_is render' -l watch -d 'render again to stdout whenever the template changes'
complete -c vault-cli -n '__vault_cli_is render' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is render' -F
complete -c vault-cli -n '__vault_cli_is run' -l agent -x -a '(__vault_cli_names agent)' -d 'agent to act as (default: the command’s name)'
complete -c vault-cli -n '__vault_cli_is run' -l scope -x -a '(__vault_cli_names entry)' -d 'narrow the session to this entry'
complete -c vault-cli -n '__vault_cli_is run' -l keep-env -x -d 'pass this secret-looking variable through'
complete -c vault-cli -n '__vault_cli_is run' -l upstream-ca -r -F -d 'also trust this PEM file for upstream servers in the proxy (tests, private CAs)'
complete -c vault-cli -n '__vault_cli_is run' -l allow-write -r -F -d 'let the sandboxed agent write this directory too'
complete -c vault-cli -n '__vault_cli_is run' -l allow-read -r -F -d 'keep this credential store (~/.ssh, ~/.aws, ...) readable to the sandboxed agent'
complete -c vault-cli -n '__vault_cli_is run' -l allow-net -x -d 'let the sandboxed agent connect directly to host:port'
complete -c vault-cli -n '__vault_cli_is run' -l no-sandbox -d 'run the agent without the OS sandbox, as you (warned and audited)'
complete -c vault-cli -n '__vault_cli_is run' -l allow-title -d 'let the agent set the terminal\'s window title'
complete -c vault-cli -n '__vault_cli_is run' -l no-browser -d 'print the ceremony page’s URL only; do not open a browser'
complete -c vault-cli -n '__vault_cli_is run' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is dashboard' -l no-browser -d 'print the ceremony page’s URL only; do not open a browser'
complete -c vault-cli -n '__vault_cli_is dashboard' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is vault create' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is vault passwd' -l recovery -d 'authenticate with the recovery key instead'
complete -c vault-cli -n '__vault_cli_is vault passwd' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is vault backup' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is vault backup' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is vault backup' -F
complete -c vault-cli -n '__vault_cli_is vault check' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is vault check' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is vault restore' -l yes -d 'restore without asking (needed when no terminal can ask)'
complete -c vault-cli -n '__vault_cli_is vault restore' -l dry-run -d 'show what would be rolled back; change nothing'
complete -c vault-cli -n '__vault_cli_is vault restore' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is vault restore' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is vault restore' -F
complete -c vault-cli -n '__vault_cli_is vault rekey' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is entry set' -l field -x -a 'password key private_key secret_key token totp' -d 'field name (default: password)'
complete -c vault-cli -n '__vault_cli_is entry set' -l tier -x -d 'tier of a new entry (default: default)'
complete -c vault-cli -n '__vault_cli_is entry set' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is entry set' -a '(__vault_cli_names entry)'
complete -c vault-cli -n '__vault_cli_is entry rm' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is entry rm' -a '(__vault_cli_names entry)'
complete -c vault-cli -n '__vault_cli_is entry show' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is entry show' -l reveal -d 'print the value of one field (--field; default password), audited'
complete -c vault-cli -n '__vault_cli_is entry show' -l field -x -a 'password key private_key secret_key token totp' -d 'field name (default: password)'
complete -c vault-cli -n '__vault_cli_is entry show' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is entry show' -a '(__vault_cli_names entry)'
complete -c vault-cli -n '__vault_cli_is entry ls' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is entry ls' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is entry hosts' -l clear -d 'remove the binding'
complete -c vault-cli -n '__vault_cli_is entry hosts' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is entry hosts' -a '(__vault_cli_names entry)'
complete -c vault-cli -n '__vault_cli_is agent add' -l scope -x -a '(__vault_cli_names entry)' -d 'entry the agent may read'
complete -c vault-cli -n '__vault_cli_is agent add' -l kind -x -a 'ai script' -d 'what the agent is (default: ai)'
complete -c vault-cli -n '__vault_cli_is agent add' -l per-minute -x -d 'distinct credentials per minute (default 3)'
complete -c vault-cli -n '__vault_cli_is agent add' -l per-hour -x -d 'distinct credentials per hour (default 10)'
complete -c vault-cli -n '__vault_cli_is agent add' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent ls' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is agent ls' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent show' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is agent show' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent show' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is agent wrap' -l command -x -d 'the command to wrap (default: the agent name)'
complete -c vault-cli -n '__vault_cli_is agent wrap' -l rm -d 'stop wrapping it'
complete -c vault-cli -n '__vault_cli_is agent wrap' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent wrap' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is agent scope' -l add -x -a '(__vault_cli_names entry)' -d 'entry to add'
complete -c vault-cli -n '__vault_cli_is agent scope' -l rm -x -a '(__vault_cli_names entry)' -d 'entry to remove'
complete -c vault-cli -n '__vault_cli_is agent scope' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent scope' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is agent limits' -l per-minute -x -d 'distinct credentials per minute'
complete -c vault-cli -n '__vault_cli_is agent limits' -l per-hour -x -d 'distinct credentials per hour'
complete -c vault-cli -n '__vault_cli_is agent limits' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent limits' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is agent lock' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent lock' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is agent unlock' -l no-browser -d 'print the ceremony page’s URL only; do not open a browser'
complete -c vault-cli -n '__vault_cli_is agent unlock' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent unlock' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is agent revoke' -l id -x -d 'the agent by its id (agent ls --json), when its name no longer finds it'
complete -c vault-cli -n '__vault_cli_is agent revoke' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is agent revoke' -a '(__vault_cli_names agent)'
complete -c vault-cli -n '__vault_cli_is key add' -l name -x -d 'name of the key (default: key-<n>)'
complete -c vault-cli -n '__vault_cli_is key add' -l no-browser -d 'print the ceremony page’s URL only; do not open a browser'
complete -c vault-cli -n '__vault_cli_is key add' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is key ls' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is key ls' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is key rm' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is audit' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is audit' -l agent -x -a '(__vault_cli_names agent)' -d 'records by or about this agent'
complete -c vault-cli -n '__vault_cli_is audit' -l since -x -d 'from a time (2026-11-22 14:00) or back a span (10m, 2h, 7d)'
complete -c vault-cli -n '__vault_cli_is audit' -l follow -d 'keep printing records as they are written'
complete -c vault-cli -n '__vault_cli_is audit' -l verify -d 'check the hash chain; exit 74 (VLT-3003) if a record was changed, removed or reordered'
complete -c vault-cli -n '__vault_cli_is audit' -l archive -r -F -d 'with --verify: verify this archive file and its link into the store'
complete -c vault-cli -n '__vault_cli_is audit' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is audit archive' -l before -x -d 'archive records before this time (2026-11-01) or older than a span (30d)'
complete -c vault-cli -n '__vault_cli_is audit archive' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is audit archive' -F
complete -c vault-cli -n '__vault_cli_is shell-init' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is shell-init' -a 'bash zsh fish'
complete -c vault-cli -n '__vault_cli_is completion' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is completion' -a 'bash zsh fish'
complete -c vault-cli -n '__vault_cli_is daemon' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is daemon stop' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is daemon status' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is daemon status' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is host install' -l user -x -d 'the host’s system user (default vault-cli)'
complete -c vault-cli -n '__vault_cli_is host install' -l group -x -d 'the group whose members reach the host (default vault-cli)'
complete -c vault-cli -n '__vault_cli_is host install' -l state-dir -r -F -d 'the store, only the host’s user enters it (default /var/lib/vault-cli)'
complete -c vault-cli -n '__vault_cli_is host install' -l socket-dir -r -F -d 'the socket, reachable by the group (default /run/vault-cli)'
complete -c vault-cli -n '__vault_cli_is host install' -l member -x -d 'a user to add to the group'
complete -c vault-cli -n '__vault_cli_is host install' -l move -r -F -d 'move this same-user vault directory’s store into the hardened host'
complete -c vault-cli -n '__vault_cli_is host install' -l no-systemd -d 'write no service unit; print how to start the host'
complete -c vault-cli -n '__vault_cli_is host install' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is host uninstall' -l move-to -r -F -d 'move the store to this directory, owned by --owner'
complete -c vault-cli -n '__vault_cli_is host uninstall' -l owner -x -d 'the user who gets the moved store'
complete -c vault-cli -n '__vault_cli_is host uninstall' -l purge -d 'delete the hardened host’s store'
complete -c vault-cli -n '__vault_cli_is host uninstall' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is host status' -l json -d 'machine-readable output'
complete -c vault-cli -n '__vault_cli_is host status' -l help -d 'show this help'
complete -c vault-cli -n '__vault_cli_is help' -l help -d 'show this help'

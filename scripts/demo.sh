#!/usr/bin/env bash
# A short offline demo of the main job, in a throwaway vault: the owner stores
# credentials and scopes an agent; the agent fetches only what its token names,
# and values go only into pipes.
#
# Everything it writes stays in one temp dir, removed at the end: the vault,
# the agent's config, and a throwaway HOME and XDG dirs, so `init` finds no
# coding agent of the user's to leave a guardrail skill for (and --no-skill
# says so twice). The user's home is left as it was found.
set -euo pipefail
cd "$(dirname "$0")/.."
demo=$(mktemp -d)
mkdir -p "$demo/home" "$demo/xdg/config" "$demo/xdg/data" "$demo/xdg/cache" "$demo/xdg/state"
export HOME="$demo/home" XDG_CONFIG_HOME="$demo/xdg/config" XDG_DATA_HOME="$demo/xdg/data" \
  XDG_CACHE_HOME="$demo/xdg/cache" XDG_STATE_HOME="$demo/xdg/state"
unset CODEX_HOME VAULT_TOKEN
export VAULT_DIR="$demo/vault" VAULT_CONFIG_DIR="$demo/config" VAULT_HOST_IDLE_MS=60000
cleanup() { vault-cli daemon stop >/dev/null 2>&1 || true; rm -rf "$demo"; }
trap cleanup EXIT
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

printf 'demo passphrase, not a real one' > "$demo/passphrase"
export VAULT_PASSPHRASE_FILE="$demo/passphrase"

say vault-cli vault create
vault-cli vault create >/dev/null
say "printf 'hunter2' | vault-cli entry set 'Stripe Prod'"
printf 'hunter2' | vault-cli entry set 'Stripe Prod'
say "printf 'sk_live_x' | vault-cli entry set 'Stripe Prod' --field key"
printf 'sk_live_x' | vault-cli entry set 'Stripe Prod' --field key
say "printf 'JBSWY3DPEHPK3PXP' | vault-cli entry set GitHub --field totp"
printf 'JBSWY3DPEHPK3PXP' | vault-cli entry set GitHub --field totp
printf 'payroll-password' | vault-cli entry set Payroll 2>/dev/null
say "VAULT_TOKEN=\$(vault-cli agent add claude --scope 'Stripe Prod' --scope GitHub)"
token=$(vault-cli agent add claude --scope 'Stripe Prod' --scope GitHub)
printf 'STRIPE_KEY=vault://Stripe Prod/key\n' > "$demo/app.env"

# From here on, the agent's side: no passphrase, only its token. A value goes
# only into a pipe, never onto this terminal or into a file.
(
  unset VAULT_PASSPHRASE_FILE
  cd "$demo"
  say 'echo "$VAULT_TOKEN" | vault-cli init --no-skill'
  echo "$token" | vault-cli init --no-skill
  say "vault-cli get 'Stripe Prod' > value.txt        # a file, or a terminal: refused"
  vault-cli get 'Stripe Prod' > value.txt || echo "(exit status $?)"
  say "vault-cli get 'Stripe Prod' | wc -c            # a pipe: the value reaches the next program"
  vault-cli get 'Stripe Prod' | wc -c
  say "vault-cli totp GitHub | wc -c                  # the current code, piped"
  vault-cli totp GitHub | wc -c
  say 'cat app.env'
  cat app.env
  say "vault-cli render app.env | (set -a; . /dev/stdin; echo \"the app got a \${#STRIPE_KEY}-character key\")"
  vault-cli render app.env | (set -a; . /dev/stdin; echo "the app got a ${#STRIPE_KEY}-character key")
  say 'vault-cli get Payroll > /dev/null               # outside the scope'
  vault-cli get Payroll > /dev/null || echo "(exit status $?)"
)
say vault-cli audit
vault-cli audit
say 'vault-cli agent show claude'
vault-cli agent show claude

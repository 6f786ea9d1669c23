#!/usr/bin/env bash
# A short offline demo of the main job, in a throwaway vault: the owner stores
# credentials and scopes an agent; the agent fetches only what its token names.
set -euo pipefail
cd "$(dirname "$0")/.."
demo=$(mktemp -d)
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

# From here on, the agent's side: no passphrase, only its token.
(
  unset VAULT_PASSPHRASE_FILE
  say 'echo "$VAULT_TOKEN" | vault-cli init'
  echo "$token" | vault-cli init
  say "vault-cli get 'Stripe Prod'"
  vault-cli get 'Stripe Prod'
  say "vault-cli get 'Stripe Prod' --field key"
  vault-cli get 'Stripe Prod' --field key
  say 'vault-cli totp GitHub'
  vault-cli totp GitHub
  say 'vault-cli get Payroll'
  vault-cli get Payroll || echo "(exit status $?)"
)
say vault-cli audit
vault-cli audit
say 'vault-cli agent show claude'
vault-cli agent show claude

/**
 * The supervised child's environment, built by one pure function
 * (docs/run.md): ordinary variables pass through; variables that look like
 * secrets, by name or by value, are stripped unless the owner keeps them by
 * name; a variable that holds a `vault://` reference and nothing else passes
 * (the proxy fills it where it goes; the agent never holds the value); the
 * owner's vault variables and any long-lived token never pass; the session
 * token goes into VAULT_TOKEN and the proxy/CA block is set last, so it
 * always wins over whatever the parent had. What did not pass is named (never
 * its value), so an agent that fails to authenticate is not a mystery.
 */
import { parseReference } from '../src/core/reference.js';
/** Never passed, even with --keep-env: the owner's passphrase and vault, and token files. */
const NEVER = new Set([
    'VAULT_PASSPHRASE_FILE',
    'VAULT_NEW_PASSPHRASE_FILE',
    'VAULT_CONFIG_DIR',
    'VAULT_TOKEN',
    'VAULT_TOKEN_FILE',
]);
/** Names that say "secret": matched on the upper-cased name, as whole words or word parts. */
const SECRET_NAME = /(^|_)(TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PASSPHRASE|PWD_SECRET|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|SECRET_?KEY|CREDENTIAL|CREDENTIALS|CREDS|AUTH|SESSION_?KEY|SIGNING_?KEY|CLIENT_?SECRET|DSN|CONNECTION_?STRING)($|_)/;
/** Well-known names that carry a secret without saying so. */
const SECRET_NAMES = new Set([
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'GITHUB_TOKEN',
    'GH_TOKEN',
    'NPM_TOKEN',
    'NODE_AUTH_TOKEN',
    'DATABASE_URL',
    'SSH_AUTH_SOCK',
]);
/** Ordinary variables whose names happen to match the pattern above. */
const ORDINARY = new Set(['PWD', 'OLDPWD', 'XAUTHORITY']);
function secretName(name) {
    const n = name.toUpperCase();
    if (ORDINARY.has(n))
        return false;
    return SECRET_NAMES.has(n) || SECRET_NAME.test(n);
}
/** Shannon entropy in bits per character. */
function entropy(s) {
    const counts = new Map();
    for (const ch of s)
        counts.set(ch, (counts.get(ch) ?? 0) + 1);
    let h = 0;
    for (const c of counts.values()) {
        const p = c / s.length;
        h -= p * Math.log2(p);
    }
    return h;
}
/**
 * Values that look like secrets: a vault token, a PEM block, a URL with a
 * password, a known key prefix, or one long high-entropy word (paths and lists
 * of paths excepted).
 */
export function secretValue(value) {
    if (/\bvltr?_[0-9A-Za-z]{20,}/.test(value))
        return true;
    if (/-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)?-----/.test(value))
        return true;
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i.test(value))
        return true;
    if (/^(sk-|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|glpat-)[A-Za-z0-9_-]{12,}/.test(value))
        return true;
    const word = value.trim();
    if (word.length >= 32 && /^[A-Za-z0-9+/=_-]+$/.test(word) && !word.includes('/')) {
        return entropy(word) >= 4;
    }
    return false;
}
/** Builds the child's environment. Pure: same input, same output. */
export function childEnv(input) {
    const keep = new Set(input.keep ?? []);
    const forbidden = (input.forbiddenValues ?? []).filter((v) => v.length > 0);
    const env = {};
    const stripped = [];
    for (const [name, value] of Object.entries(input.parent)) {
        if (value === undefined || name === 'VAULT_TOKEN')
            continue;
        if (NEVER.has(name) || forbidden.some((f) => value.includes(f))) {
            stripped.push(name);
            continue;
        }
        // A reference is safe by design: only the proxy, for its bound hosts, turns it into a value.
        if (parseReference(value) !== null) {
            env[name] = value;
            continue;
        }
        if (!keep.has(name) && (secretName(name) || secretValue(value))) {
            stripped.push(name);
            continue;
        }
        env[name] = value;
    }
    env.VAULT_TOKEN = input.sessionToken;
    for (const [name, value] of input.proxy)
        env[name] = value;
    return { env, stripped: stripped.sort() };
}
/**
 * The line `run` prints about what it did not pass, or null when it passed
 * everything: names only, with the way to pass one.
 */
export function strippedLine(stripped) {
    if (stripped.length === 0)
        return null;
    // A name is the owner's own, but may hold anything but `=`: an odd one is quoted.
    const shown = stripped.map((n) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(n) ? n : JSON.stringify(n)));
    return (`vault-cli: not passed to the agent: ${shown.join(' ')} ` +
        '(--keep-env NAME passes one; a vault:// reference passes as it is)');
}

/**
 * The guardrail skill `vault-cli init` leaves for the coding agents it finds:
 * one file (or one marked section of a shared file) per agent, in the place
 * that agent documents. The text is a constant: it never holds the token or
 * anything else about this machine, so writing it cannot leak a secret.
 * Writing is idempotent: a whole file is rewritten, a section between our
 * markers is replaced, and anything else in a shared file is kept.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SKILL_AGENTS } from '../commands/table.js';
export { SKILL_AGENTS };
export const BEGIN_MARK = '<!-- BEGIN vault-cli guardrails (written by vault-cli init) -->';
export const END_MARK = '<!-- END vault-cli guardrails -->';
/** The guardrails of the specification, as Markdown without a title. */
export const GUARDRAILS = `This machine keeps credentials in vault-cli. You hold a scoped agent token
(stored by \`vault-cli init\`); every read is rate-limited and written to an
audit log the owner reads.

Rules:

1. One credential at a time. Ask for the single entry the task needs, by its
   exact name as the user gave it. Never loop over names, never enumerate,
   list or probe entries (there is no listing for agents, on purpose).
2. Never echo a secret into the conversation: do not print, quote, summarise,
   log or commit a value, and do not run commands whose output shows one.
3. Prefer pipes that keep values out of your context:
   - HTTP APIs: route the tool through the proxy, which fills
     \`vault://<entry>/<field>\` references in requests:
     \`eval "$(vault-cli proxy env)"\` with \`vault-cli proxy\` running.
   - Configuration files: keep \`vault://<entry>/<field>\` references in the
     file and pipe it: \`vault-cli render config.yaml | app --config -\`.
   - Use \`vault-cli get <entry> --field <field>\` only when neither works, and
     only inside a command substitution or pipe, never to read the value.
   \`get\`, \`totp\` and \`render\` write only into a pipe: when their output
   would go to your terminal or into a file they refuse with VLT-2050 and
   read nothing. Then pipe the output straight into the program that uses
   it (\`vault-cli render app.yaml | app --config -\`,
   \`vault-cli get registry --field token | docker login -u ci --password-stdin\`);
   never pipe it to \`cat\`, \`tee\` or a file to see it.
4. Errors are final answers, not puzzles:
   - VLT-2041 (Access denied): the entry is outside your scope. Stop and ask
     the user to grant it; do not try other names.
   - VLT-2042 (Rate limit exceeded; violation recorded): you read too many
     distinct credentials (3 a minute, 10 an hour). Stop reading and tell the
     user.
   - VLT-2043 (Agent locked): you are frozen until the owner unlocks you with
     a hardware key. Tell the user; nothing you do will lift it.
   - VLT-2050 (Values go only into a pipe): nothing was read; run the
     command again with its output piped into the program that needs it.
   Guessing entry names counts against you: each name refused with VLT-2041
   takes one of your reads in the minute and the hour, as reading a
   credential would (asking the same name again in the window costs nothing
   more). After three guesses in a minute your next read is refused with
   VLT-2042 and recorded as a violation; a second violation within two hours
   locks the agent down.
   Sending a reference somewhere its entry is not meant to go is a violation
   too: a \`vault://\` reference in a request to a host the entry is not bound
   to (VLT-2045), or a Host header that does not match the tunnel it is sent
   through (VLT-2048). Each is recorded as a violation, like an over-read,
   and counts toward the same lockdown. Send a reference only to the
   service its credential belongs to.
`;
const DESCRIPTION = 'Rules for using credentials from vault-cli: one credential at a time, never print secrets, prefer the proxy and render pipes, and what VLT-2041/2042/2043/2050 mean. Use whenever a task needs an API key, password, token or other secret.';
export function skillTargets(dirs) {
    return [
        {
            agent: 'claude',
            dir: dirs.claude,
            file: join(dirs.claude, 'skills', 'vault-cli', 'SKILL.md'),
            mode: 'file',
        },
        { agent: 'codex', dir: dirs.codex, file: join(dirs.codex, 'AGENTS.md'), mode: 'section' },
        {
            agent: 'cursor',
            dir: dirs.cursor,
            file: join(dirs.cursor, 'rules', 'vault-cli.mdc'),
            mode: 'file',
        },
        { agent: 'gemini', dir: dirs.gemini, file: join(dirs.gemini, 'GEMINI.md'), mode: 'section' },
        { agent: 'agents', dir: dirs.agents, file: join(dirs.agents, 'AGENTS.md'), mode: 'section' },
    ];
}
/** The whole text of an agent's own file, or the section for a shared one. */
export function skillContent(agent) {
    switch (agent) {
        case 'claude':
            return `---\nname: vault-cli\ndescription: ${DESCRIPTION}\n---\n\n# Credentials through vault-cli\n\n${GUARDRAILS}`;
        case 'cursor':
            return `---\ndescription: ${DESCRIPTION}\nglobs:\nalwaysApply: true\n---\n\n# Credentials through vault-cli\n\n${GUARDRAILS}`;
        case 'codex':
        case 'gemini':
        case 'agents':
            return `${BEGIN_MARK}\n## Credentials through vault-cli\n\n${GUARDRAILS}${END_MARK}\n`;
    }
}
/**
 * `existing` with our marked section replaced by `section`, or `section`
 * appended (after a blank line) when there is none. Pure.
 */
export function upsertSection(existing, section) {
    const start = existing.indexOf(BEGIN_MARK);
    const end = start === -1 ? -1 : existing.indexOf(END_MARK, start);
    if (start !== -1 && end !== -1) {
        let after = end + END_MARK.length;
        if (existing[after] === '\n')
            after++;
        return existing.slice(0, start) + section + existing.slice(after);
    }
    if (existing === '')
        return section;
    return existing.replace(/\n*$/, '\n\n') + section;
}
function writeAtomic(file, text) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.new`;
    writeFileSync(tmp, text, { mode: 0o644, flag: 'w' });
    renameSync(tmp, file);
}
/** Writes one target; returns the file written. */
export function installSkill(target) {
    const content = skillContent(target.agent);
    if (target.mode === 'file') {
        writeAtomic(target.file, content);
    }
    else {
        const existing = existsSync(target.file) ? readFileSync(target.file, 'utf8') : '';
        writeAtomic(target.file, upsertSection(existing, content));
    }
    return target.file;
}
/**
 * Installs the guardrails for `only` (creating its directory), or else for
 * every agent whose configuration directory exists. Returns what was written.
 */
export function installSkills(dirs, only) {
    const targets = skillTargets(dirs).filter((t) => only === undefined ? existsSync(t.dir) : t.agent === only);
    for (const t of targets)
        installSkill(t);
    return targets;
}

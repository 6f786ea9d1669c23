/**
 * `vault-cli git-credential --entry E [--field F] [--username U] <get|store|erase>`:
 * git's credential-helper protocol (`git help credential`), answering
 * `get` with a reference as the password. git sends it as Basic credentials,
 * the proxy decodes them and fills the reference (src/proxy/basic.ts), so
 * `git push` over HTTPS works while git, its credential cache and the agent
 * only ever hold `vault://E/F`.
 *
 * The entry is named in git's configuration, per remote
 * (`credential.https://github.com.helper`), not found from the host: an agent
 * has no listing of entries or of their host bindings to search. The helper
 * never calls the host; whether the reference may be filled, and for which
 * host, is judged by the proxy and the host when git sends it.
 */
import { VaultError } from '../../core/errors.js';
import { checkEntryName, checkFieldName, DEFAULT_FIELD } from '../../core/names.js';
import { formatReference } from '../../core/reference.js';
import { arg, flagString } from '../context.js';
import { readAll } from '../io.js';
/** The user name git sends when neither the flag nor the URL names one (GitHub's, for tokens). */
const DEFAULT_USERNAME = 'x-access-token';
/** git's description of the credential it wants: `key=value` lines up to a blank line. */
function attributes(text) {
    const out = new Map();
    for (const line of text.split('\n')) {
        if (line === '')
            break;
        const eq = line.indexOf('=');
        if (eq > 0)
            out.set(line.slice(0, eq), line.slice(eq + 1));
    }
    return out;
}
/** A user name fit for Basic credentials and git's protocol: no colon, no control character. */
function checkUsername(name) {
    if (name === '' || /[:\u0000-\u001f\u007f]/.test(name)) {
        throw new VaultError('VLT-1002', 'A user name has no colon and no control characters.');
    }
    return name;
}
export const run = async (ctx) => {
    const action = arg(ctx, 'action');
    const entry = flagString(ctx, 'entry');
    if (entry === undefined) {
        throw new VaultError('VLT-1001', 'vault-cli git-credential needs --entry <entry>.');
    }
    const reference = formatReference(checkEntryName(entry), checkFieldName(flagString(ctx, 'field') ?? DEFAULT_FIELD));
    // git writes its description and closes the pipe; read it whatever the action.
    const asked = attributes((await readAll(ctx.stdin)).toString('utf8'));
    // `store` and `erase`: nothing is kept, so nothing to store or forget.
    if (action !== 'get')
        return 0;
    const username = checkUsername(flagString(ctx, 'username') ?? asked.get('username') ?? DEFAULT_USERNAME);
    ctx.stdout.write(`username=${username}\npassword=${reference}\n`);
    return 0;
};

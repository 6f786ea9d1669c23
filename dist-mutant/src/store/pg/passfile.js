/**
 * The team database's password from a password file, read by vault-cli
 * itself (docs/team.md): the `pg` client's own PGPASSFILE support printed a
 * deprecation warning at every host start and goes away in pg 9. The format
 * and the matching are libpq's (https://www.postgresql.org/docs/current/libpq-pgpass.html):
 * one `hostname:port:database:username:password` a line, `*` matching
 * anything in the first four fields, `\` escaping a `:` or a `\`, `#`
 * starting a comment line, the first matching line winning. Pure: the file
 * is read by the caller (pg-worker.ts).
 */
/** libpq's default socket directory: a connection through it is `localhost` to the file. */
const DEFAULT_SOCKET_DIR = '/var/run/postgresql';
const DEFAULT_PORT = 5432;
/** One line's fields, split at each unescaped `:`; null for a comment, a blank line or too few fields. */
export function parseLine(line) {
    if (line.startsWith('#') || line.trim() === '')
        return null;
    const fields = [];
    let cur = '';
    let raw = '';
    const end = () => {
        fields.push(raw === '*' ? null : cur);
        cur = '';
        raw = '';
    };
    for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (c === '\\' && i + 1 < line.length) {
            raw += c + line[i + 1];
            cur += line[++i];
        }
        else if (c === ':') {
            // As libpq: the password, too, ends at an unescaped colon (what follows is ignored).
            end();
        }
        else {
            raw += c;
            cur += c;
        }
    }
    end();
    if (fields.length < 5)
        return null;
    const [host, port, database, user, password] = fields;
    return {
        host: host ?? null,
        port: port ?? null,
        database: database ?? null,
        user: user ?? null,
        password: password ?? '*',
    };
}
/** Every line of a password file that has five fields, in order. */
export function parsePassfile(text) {
    return text.split(/\r?\n/).flatMap((l) => parseLine(l) ?? []);
}
/** The host as the file names it: libpq's default socket directory and no host are `localhost`. */
function fileHost(host) {
    return host === '' || host === DEFAULT_SOCKET_DIR ? 'localhost' : host;
}
/** The password of the first line that matches `to`, or undefined (the server then asks in vain). */
export function passwordFor(lines, to) {
    const host = fileHost(to.host);
    const port = String(to.port || DEFAULT_PORT);
    const match = (field, value) => field === null || field === value;
    const line = lines.find((l) => match(l.host, host) &&
        match(l.port, port) &&
        match(l.database, to.database) &&
        match(l.user, to.user));
    return line?.password;
}
/**
 * Whether a file of this mode may be used: libpq ignores one that its
 * group or others can read or write (and says so), and so does vault-cli.
 */
export function passfileModeSafe(mode) {
    return (mode & 0o077) === 0;
}

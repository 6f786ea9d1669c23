/**
 * The ceremony server: serves a page on 127.0.0.1 (a random port, or the
 * owner's `--port` for an ssh -L forward), as `http://localhost:<port>/<random
 * path>` (an IP is not a valid RP id), takes exactly one result from it, and
 * closes, unless the verdict published a next page (an enrolled key's vouch,
 * then the new key): each page its own path, one result each. It decides
 * nothing: whatever the page posts is relayed, and the host's verdict shown.
 *
 * Requests whose Host is not `localhost:<port>` are refused (DNS rebinding),
 * and so are posts whose Origin is another site's.
 */
import { createServer } from 'node:http';
import { randomBytes } from '../crypto/aead.js';
import { ceremonyPage } from './page.js';
const MAX_RESULT_BYTES = 64 * 1024;
function readJson(req) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        req.on('data', (c) => {
            size += c.length;
            if (size > MAX_RESULT_BYTES) {
                reject(new Error('too large'));
                req.destroy();
                return;
            }
            chunks.push(c);
        });
        req.on('end', () => {
            try {
                resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            }
            catch (err) {
                reject(err instanceof Error ? err : new Error('bad JSON'));
            }
        });
        req.on('error', reject);
    });
}
/**
 * Starts listening on `port` of 127.0.0.1 (0: a random one); nothing is served until `publish`.
 * @throws the listen error (EADDRINUSE) as it is.
 */
export async function startPageServer(port = 0) {
    const pages = new CeremonyServer();
    await pages.listen(port);
    return pages;
}
/** The server and the one page it serves at a time. */
class CeremonyServer {
    closed;
    resolveClosed = () => { };
    /** The page's script's, and only its: the page's Content-Security-Policy names it. */
    nonce = randomBytes(16).toString('base64');
    server = createServer((req, res) => this.serve(req, res));
    page = null;
    port = 0;
    constructor() {
        this.closed = new Promise((r) => (this.resolveClosed = r));
    }
    get origin() {
        return `http://localhost:${this.port}`;
    }
    async listen(port) {
        await new Promise((resolve, reject) => {
            this.server.once('error', reject);
            this.server.listen(port, '127.0.0.1', () => resolve());
        });
        this.port = this.server.address().port;
    }
    publish(shown, onResult, timeoutMs) {
        clearTimeout(this.page?.timer);
        const path = '/' + randomBytes(16).toString('hex');
        const p = {
            path,
            html: ceremonyPage({ ...shown, resultPath: `${path}/result`, nonce: this.nonce }),
            onResult,
            taken: false,
        };
        p.timer = setTimeout(() => {
            if (p.taken)
                return;
            p.taken = true;
            onResult({ error: 'Timeout' }).then(() => this.page === p && this.close(), () => this.page === p && this.close());
        }, timeoutMs);
        this.page = p;
        return `${this.origin}${path}`;
    }
    close() {
        clearTimeout(this.page?.timer);
        this.server.close(() => this.resolveClosed());
        // Every reply says `Connection: close`; a browser that holds a socket open anyway
        // is cut off shortly (not at once: the verdict must reach the page first).
        setTimeout(() => this.server.closeAllConnections(), 1000).unref();
    }
    serve(req, res) {
        const send = (status, type, body) => {
            res.writeHead(status, replyHeaders(type, this.nonce));
            res.end(body);
        };
        const reply = (status, v) => send(status, 'application/json', JSON.stringify(v));
        if (req.headers.host !== `localhost:${this.port}`) {
            return reply(421, { ok: false, message: 'Wrong host.' });
        }
        const p = this.page;
        if (req.method === 'GET' && p !== null && req.url === p.path) {
            return send(200, 'text/html; charset=utf-8', p.html);
        }
        if (req.method === 'POST' && p !== null && req.url === `${p.path}/result`) {
            const from = req.headers.origin;
            if (from !== undefined && from !== this.origin) {
                return reply(403, { ok: false, message: 'Wrong origin.' });
            }
            if (p.taken)
                return reply(410, { ok: false, message: 'This page has already been used.' });
            return this.takeResult(p, req, reply);
        }
        return reply(404, { ok: false, message: 'Not found.' });
    }
    /** Relays page `p`'s one result and shows the verdict; closes unless a next page was published. */
    takeResult(p, req, reply) {
        p.taken = true;
        clearTimeout(p.timer);
        readJson(req)
            .catch(() => ({ error: 'BadResult' }))
            .then((result) => p.onResult(result))
            .then((v) => reply(200, v), () => reply(200, { ok: false, message: 'Refused.' }))
            .finally(() => {
            if (this.page === p)
                this.close();
        });
    }
}
/** Every reply's headers: not cached, not sniffed, no referrer, no script but the page's own. */
function replyHeaders(type, nonce) {
    return {
        'content-type': type,
        'cache-control': 'no-store',
        connection: 'close',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    };
}

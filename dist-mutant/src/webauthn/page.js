/**
 * The ceremony page: one HTML document with one inline script that runs
 * `navigator.credentials.create()` or `.get()` with the host's options and
 * posts the browser's answer (binary fields base64url) back to the page's own
 * server. It holds no secret: the challenge is public, the key signs it. The
 * title says what the touch does (which agent it unlocks), as the host named it.
 */
/**
 * The page's script, plain JavaScript (it runs in the browser, not on Node):
 * `KIND`, `OPTIONS` and `RESULT_PATH` are defined before it.
 */
const SCRIPT = String.raw `
const status = document.getElementById('status');
const b64 = (buf) => {
  let s = '';
  for (const byte of new Uint8Array(buf)) s += String.fromCharCode(byte);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const unb64 = (text) => {
  const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out.buffer;
};
const ids = (list) => list.map((d) => ({ type: d.type, id: unb64(d.id) }));
const send = async (body) => {
  const r = await fetch(RESULT_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const reply = await r.json();
  status.textContent = reply.message;
  status.className = reply.ok ? 'ok' : 'fail';
  if (reply.ok && typeof reply.next === 'string') {
    // The next step is another page of this server (the new key, after a vouch).
    const link = document.createElement('a');
    link.href = reply.next;
    link.textContent = 'Go on to the next step';
    status.append(' ', link);
    document.title = 'vault-cli: next step';
    return;
  }
  document.title = reply.ok ? 'vault-cli: done' : 'vault-cli: refused';
};
// The credential as JSON, binary fields base64url; the response fields its kind adds.
const sendCredential = (cred, response) =>
  send({
    credential: {
      id: cred.id,
      rawId: b64(cred.rawId),
      type: cred.type,
      response: { clientDataJSON: b64(cred.response.clientDataJSON), ...response },
    },
  });
const run = async () => {
  try {
    if (KIND === 'create') {
      const cred = await navigator.credentials.create({
        publicKey: {
          ...OPTIONS,
          challenge: unb64(OPTIONS.challenge),
          user: { ...OPTIONS.user, id: unb64(OPTIONS.user.id) },
          excludeCredentials: ids(OPTIONS.excludeCredentials),
        },
      });
      const res = cred.response;
      await sendCredential(cred, {
        attestationObject: b64(res.attestationObject),
        transports: typeof res.getTransports === 'function' ? res.getTransports() : [],
      });
    } else {
      const cred = await navigator.credentials.get({
        publicKey: {
          ...OPTIONS,
          challenge: unb64(OPTIONS.challenge),
          allowCredentials: ids(OPTIONS.allowCredentials),
        },
      });
      const res = cred.response;
      await sendCredential(cred, {
        authenticatorData: b64(res.authenticatorData),
        signature: b64(res.signature),
        userHandle: res.userHandle === null ? null : b64(res.userHandle),
      });
    }
  } catch (err) {
    const name = err instanceof Error ? err.name : 'Error';
    status.textContent = 'The browser ended the ceremony: ' + name + '.';
    status.className = 'fail';
    await send({ error: name }).catch(() => {});
  }
};
void run();
`;
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON that is safe inside a <script> element. */
const scriptJson = (v) => JSON.stringify(v).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
/** The whole page; `nonce` is the CSP nonce of its one script. */
export function ceremonyPage(opts) {
    const call = `const KIND = ${scriptJson(opts.kind)};\nconst OPTIONS = ${scriptJson(opts.options)};\n` +
        `const RESULT_PATH = ${scriptJson(opts.resultPath)};\n${SCRIPT}`;
    return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>vault-cli: ${escapeHtml(opts.title)}</title>
<style>body{font:16px system-ui,sans-serif;margin:3em auto;max-width:36em}.ok{color:#060}.fail{color:#a00}</style>
</head><body><h1>${escapeHtml(opts.title)}</h1>
<p id="status">Touch your security key when it blinks.</p>
<script nonce="${opts.nonce}">${call}</script>
</body></html>
`;
}

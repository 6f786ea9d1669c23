/**
 * The hardware-key rig: headless Chromium (Debian's package) driven by
 * playwright-core, with a DevTools virtual authenticator, and `vault-cli`
 * ceremonies run as real processes whose page URL is read from stderr.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { type Result, type Rig } from './rig.js';

export const CHROMIUM = '/usr/bin/chromium';
export const skipChromium = existsSync(CHROMIUM)
  ? false
  : 'needs Debian chromium at /usr/bin/chromium (.ci/run installs it)';

export interface Authenticator {
  readonly page: Page;
  readonly cdp: CDPSession;
  readonly id: string;
}

export class BrowserRig {
  private constructor(
    readonly browser: Browser,
    readonly context: BrowserContext,
  ) {}

  static async launch(): Promise<BrowserRig> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    return new BrowserRig(browser, await browser.newContext());
  }

  /** A fresh tab with its own virtual authenticator (a separate security key). */
  async authenticator(presence = true): Promise<Authenticator> {
    const page = await this.context.newPage();
    const cdp = await this.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'usb',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: presence,
      },
    });
    return { page, cdp, id: authenticatorId };
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** A `vault-cli` process running a ceremony: its page URL, and its fate when it ends. */
export interface Ceremony {
  readonly url: string;
  readonly origin: string;
  readonly done: Promise<Result>;
  /** The next page's URL, once the process prints it (a new key, after an enrolled key's vouch). */
  next(): Promise<string>;
  kill(): void;
}

/**
 * Starts `vault-cli ...args --no-browser` as the owner (`input` on its stdin)
 * and resolves once it has printed the ceremony URL on stderr; rejects if it
 * ends first.
 */
export function ceremony(
  rig: Rig,
  args: readonly string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Ceremony> {
  const child = spawn(process.execPath, [rig.cli, ...args, '--no-browser'], {
    env: { ...rig.env, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(opts.input ?? '');
  const out: Buffer[] = [];
  let err = '';
  const done = new Promise<Result>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stderr: err, stdoutBytes });
    });
  });
  child.stdout.on('data', (c: Buffer) => out.push(c));
  const URL_LINE = /open (http:\/\/localhost:[0-9]+)(\/[0-9a-f]+) /g;
  const urls = (): string[] => [...err.matchAll(URL_LINE)].map((m) => `${m[1]}${m[2]}`);
  const waiters: (() => void)[] = [];
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const u = urls()[1];
        if (u !== undefined) resolve(u);
        else waiters.push(check);
      };
      check();
      void done.then((r) => reject(new Error(`vault-cli ended before a next page: ${r.stderr}`)));
    });
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
      for (const w of waiters.splice(0)) w();
      const m = /open (http:\/\/localhost:[0-9]+)(\/[0-9a-f]+) /.exec(err);
      if (m !== null && m[1] !== undefined) {
        resolve({ url: m[1] + m[2], origin: m[1], done, next, kill: () => child.kill('SIGKILL') });
      }
    });
    void done.then((r) => reject(new Error(`vault-cli ended before its URL: ${r.stderr}`)));
  });
}

/**
 * `key add` once a key is enrolled: `voucher`, an enrolled key, confirms on
 * the first page, then `fresh` is enrolled on the next; the process's fate.
 */
export async function enrolVouched(
  voucher: Authenticator,
  fresh: Authenticator,
  c: Ceremony,
): Promise<Result> {
  await voucher.page.bringToFront();
  await voucher.page.goto(c.url);
  const url = await Promise.race([c.next(), c.done]);
  if (typeof url !== 'string') return url;
  await fresh.page.bringToFront();
  await fresh.page.goto(url);
  return c.done;
}

/** Opens the ceremony page in `a`'s tab and waits for the process to end. */
export async function runInBrowser(a: Authenticator, c: Ceremony): Promise<Result> {
  // WebAuthn answers only a focused document.
  await a.page.bringToFront();
  await a.page.goto(c.url);
  return c.done;
}

export interface ManualOptions {
  readonly challenge: string;
  readonly rpId: string;
  readonly allowCredentials: readonly { type: 'public-key'; id: string }[];
}

/**
 * Runs `navigator.credentials.get()` in `a`'s tab on whatever page it shows,
 * with options the test chose, and returns the answer as the page would post it.
 */
export async function assertIn(a: Authenticator, options: ManualOptions): Promise<unknown> {
  // A string, not a function: tsx would wrap a function's inner arrows in helpers the page lacks.
  return a.page.evaluate(`(${ASSERT_SCRIPT})(${JSON.stringify(options)})`);
}

const ASSERT_SCRIPT = String.raw`async (o) => {
  const b64 = (buf) =>
    btoa(String.fromCharCode(...new Uint8Array(buf)))
      .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const unb64 = (t) =>
    Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0)).buffer;
  const cred = await navigator.credentials.get({
    publicKey: {
      rpId: o.rpId,
      challenge: unb64(o.challenge),
      userVerification: 'discouraged',
      allowCredentials: o.allowCredentials.map((d) => ({ type: d.type, id: unb64(d.id) })),
    },
  });
  const res = cred.response;
  return {
    credential: {
      id: cred.id,
      rawId: b64(cred.rawId),
      type: cred.type,
      response: {
        clientDataJSON: b64(res.clientDataJSON),
        authenticatorData: b64(res.authenticatorData),
        signature: b64(res.signature),
      },
    },
  };
}`;

/** The options a ceremony page carries, read from its HTML as a test (not a browser) sees it. */
export async function pageOptions(c: Ceremony): Promise<ManualOptions> {
  const html = await (await fetch(c.url)).text();
  const m = /const OPTIONS = (.*);\n/.exec(html);
  if (m === null || m[1] === undefined) throw new Error('no options in the page');
  return JSON.parse(m[1]) as ManualOptions;
}

/** Posts `body` as the ceremony's result (as a page would) and returns the page server's verdict. */
export async function postResult(
  c: Ceremony,
  body: unknown,
): Promise<{ ok: boolean; message: string }> {
  const r = await fetch(c.url + '/result', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await r.json()) as { ok: boolean; message: string };
}

/** Shows a blank page at `url` in `a`'s tab (served by the test, not by any server): an origin to sign on. */
export async function blankAt(a: Authenticator, url: string): Promise<void> {
  await a.page.route(url, (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/html',
      body: '<!doctype html><title>x</title>',
    }),
  );
  await a.page.bringToFront();
  await a.page.goto(url);
  await a.page.unroute(url);
}

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
}

/** The authenticator's credentials, private keys included (DevTools can read them). */
export async function credentials(a: Authenticator): Promise<VirtualCredential[]> {
  const r = (await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.id })) as {
    credentials: VirtualCredential[];
  };
  return r.credentials;
}

/** Sets a credential's signature counter, as a cloned key with its own counter would have. */
export async function setSignCount(
  a: Authenticator,
  c: VirtualCredential,
  n: number,
): Promise<void> {
  await a.cdp.send('WebAuthn.removeCredential', {
    authenticatorId: a.id,
    credentialId: c.credentialId,
  });
  await a.cdp.send('WebAuthn.addCredential', {
    authenticatorId: a.id,
    credential: { ...c, signCount: n },
  });
}

/** Adds a credential for `localhost` with a fresh key pair; returns its id, base64url. */
export async function addStranger(a: Authenticator): Promise<string> {
  const { generateKeyPairSync, randomBytes } = await import('node:crypto');
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const id = randomBytes(32);
  await a.cdp.send('WebAuthn.addCredential', {
    authenticatorId: a.id,
    credential: {
      credentialId: id.toString('base64'),
      isResidentCredential: false,
      rpId: 'localhost',
      privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      signCount: 0,
    },
  });
  return id.toString('base64url');
}

/** base64 (DevTools) to base64url (WebAuthn JSON). */
export function toB64url(b64: string): string {
  return Buffer.from(b64, 'base64').toString('base64url');
}

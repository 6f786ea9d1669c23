import { bad } from '../../core/decode.js';
import { Secret } from '../../crypto/secret.js';
import { sealVault } from '../keys/state.js';
import { anchorAudit, anchoredHead, rememberedAnchorProblem } from '../audit/log.js';
import { VaultError } from '../../core/errors.js';
import { authenticate, endSession } from '../agent/access.js';
import { unlockOwner, unlockWithRecovery } from '../owner/keys.js';
import { rotatePending } from '../agent/sessions.js';
import { finishConfirm } from '../owner/confirm.js';
import { keysEnrolled } from '../owner/hardware-keys.js';
/** The owner secret a request carries in `field`, or VLT-1001 naming it. */
export function ownerSecret(req, field) {
    const sent = req.body[field];
    if (sent !== undefined && typeof sent !== 'string')
        throw bad(`${field} must be a string`);
    const secret = req.secrets.get(field, sent);
    if (secret === undefined)
        throw bad(`${field} must be a string`);
    return secret;
}
/**
 * The one owner gate: unlocks with the request's passphrase (or recovery key)
 * through unlockOwner's guess throttle and audit, or, when neither is sent,
 * with the calling process's hold or its terminal's owner session (VLT-2054
 * when it has neither);
 * runs `run` with the owner session, anchors the audit head it leaves, and
 * wipes the keys after it.
 */
export function owner(run, terms = {}) {
    return async (env, req) => {
        const { ctx } = env;
        terms.before?.(env, req);
        const recoveryKey = terms.recovery
            ? req.secrets.get('recoveryKey', req.body.recoveryKey)
            : undefined;
        let pass = null;
        let s;
        const sent = req.body.passphrase;
        const bySession = terms.session ?? terms.keepPassphrase !== true;
        if (recoveryKey !== undefined) {
            s = await unlockWithRecovery(ctx, recoveryKey, req.source);
            recoveryKey.wipe();
        }
        else if (sent === undefined && bySession) {
            s = env.owners.use(req.binding(), ctx.store().read((tx) => ctx.header(tx)), req.process);
        }
        else {
            pass = ownerSecret(req, 'passphrase');
            s = await unlockOwner(ctx, pass, req.source);
            // Each one is a full Argon2id run (about a second at real costs): the
            // log is where a client that sends the passphrase too often shows.
            env.log(`owner passphrase derived for ${req.op} (${req.source})`);
            if (terms.keepPassphrase !== true) {
                pass.wipe();
                pass = null;
            }
        }
        try {
            // With a hardware key enrolled, a terminal with an open owner session
            // releases and loosens only on a touch of the key bound to the request:
            // the passphrase sent from it (typed at a prompt a hook raised, or read
            // from a file the agent found) is not enough.
            if (recoveryKey === undefined && keysEnrolled(ctx)) {
                s.keyGate =
                    s.provedBy === 'terminal' ||
                        (s.provedBy === 'passphrase' && bySession && env.owners.view(req.binding()) !== null);
            }
            const proof = req.body.keyProof;
            if (proof !== undefined) {
                await finishConfirm(ctx, req.op, req.body, proof, req.source);
                s.keyConfirmed = true;
            }
            if (terms.releases !== undefined)
                s.requireProof(terms.releases);
            refuseCutLog(ctx, s, req);
            sealVault(ctx, s);
            if (terms.rotate !== false)
                rotatePending(ctx, s);
            // Awaited: the anchor goes on the head the command leaves (a backup's record included).
            const out = await run(env, req, s, pass);
            if (terms.anchor !== false)
                anchor(ctx, s);
            const made = ctx.store().read((tx) => anchoredHead(tx, s.vaultId));
            if (made !== null)
                anchors.set(req, made);
            return out;
        }
        finally {
            s.wipe();
            pass?.wipe();
        }
    };
}
/** The audit head each owner request anchored: the server adds it to the reply (AnchorRef). */
const anchors = new WeakMap();
/** The anchor `req` left, for its reply, if it left one. */
export function anchoredBy(req) {
    return anchors.get(req);
}
/**
 * Refuses, before the command does anything (or anchors anything), a store
 * whose anchor is older than the one the owner's client says its last command
 * left: an agent of the owner's user put an older anchor back and cut the log
 * to it (audit-log.ts rememberedAnchorProblem).
 * @throws VaultError VLT-3003
 */
function refuseCutLog(ctx, s, req) {
    const seen = req.body.seenAnchor;
    if (seen === undefined)
        return;
    const problem = ctx.store().read((tx) => rememberedAnchorProblem(tx, s.vaultId, seen));
    if (problem === null)
        return;
    throw new VaultError('VLT-3003', `The audit log was cut back: ${problem}. Nothing was done; restore a backup, or see docs/threat-model.md ("the owner's anchor memory").`);
}
/**
 * Each owner command anchors the audit chain head it leaves. Best effort: a
 * command that could not commit its anchor (a full disk) has still done its
 * work, and `audit --verify` counts the records after the last anchor.
 */
function anchor(ctx, s) {
    try {
        ctx.commit((tx) => anchorAudit(tx, s.vaultId, s.anchorKey(), ctx.now()));
    }
    catch {
        // Left unanchored; reported as such.
    }
}
/** The agent (or session) a token names, for the length of `run`. */
export async function asAgent(env, req, run) {
    const session = authenticate(env.ctx, agentToken(req), req.source);
    try {
        return await run(session);
    }
    finally {
        endSession(session);
    }
}
/** The token a request carries, as a Secret (a token is not lifted: it is no owner secret). */
export function agentToken(req) {
    return new Secret(Buffer.from(req.body.token, 'utf8'));
}

/** The transcript sweep's operations: the values to look for, and the exposed marks of what was found. */
import { markExposed, openBackupKey, sweepValues } from '../exposure.js';
import { owner, type OpArea } from './op.js';

type SweepOp = 'sweep.values' | 'sweep.mark' | 'sweep.unseal';

export const sweepOps: OpArea<SweepOp> = {
  'sweep.values': owner(async ({ ctx }, { body, source }, s) => ({
    values: sweepValues(ctx, s, { since: body.since, stored: body.stored }, source),
    backupKey: s.header.auditPublicKey.toString('base64'),
  })),
  'sweep.unseal': owner(async ({ ctx }, { body, source }, s) => ({
    key: openBackupKey(ctx, s, body.sealedKey, source),
  })),
  'sweep.mark': owner(async ({ ctx }, { body, source }, s) =>
    markExposed(ctx, s, body.found, source),
  ),
};

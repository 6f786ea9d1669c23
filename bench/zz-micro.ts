import { randomBytes } from 'node:crypto';
import { MultiMatcher } from '../src/core/multi-match.js';
import { leakForms } from '../src/core/leak-forms.js';
const values = Array.from({ length: 1000 }, () => Buffer.from(`sk_live_${randomBytes(18).toString('base64url')}`));
const pats = values.flatMap((v) => leakForms(v).map((f) => f.bytes));
let t = performance.now();
const m = new MultiMatcher(pats);
console.log('build', (performance.now() - t).toFixed(0), 'ms; step', m.step, 'patterns', pats.length);
const words = 'the build failed because the module could not be resolved; running npm install again {"type":"user","message":{"role":"user"}}'.split(' ');
const parts: string[] = []; let n = 0;
while (n < 64 << 20) { const w = words[Math.floor(Math.random() * words.length)]!; parts.push(w); n += w.length + 1; }
const text = Buffer.from(parts.join(' '));
for (let r = 0; r < 3; r++) {
  t = performance.now();
  const s = m.scanner(); let hits = 0;
  for (let i = 0; i < text.length; i += 1 << 20) s.push(text.subarray(i, i + (1 << 20)), () => hits++);
  const ms = performance.now() - t;
  console.log('scan', ms.toFixed(0), 'ms', ((text.length / 1048576) / (ms / 1000)).toFixed(0), 'MB/s', hits);
}

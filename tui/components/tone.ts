/** The one place tones become colours; every coloured cell also carries text. */
import type { Tone } from '../format.js';

export const COLOR: Readonly<Record<Tone, string>> = {
  ok: 'green',
  warn: 'yellow',
  alarm: 'red',
  muted: 'gray',
};

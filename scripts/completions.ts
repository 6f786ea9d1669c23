// Regenerates completions/ from the command table (npm run completions).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPLETION_FILES, completionScript } from '../src/commands/completion.js';

const dir = join(import.meta.dirname, '..', 'completions');
for (const { shell, file } of COMPLETION_FILES) {
  writeFileSync(join(dir, file), completionScript(shell));
}

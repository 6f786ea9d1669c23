// Ends the run with the plain line CI reads: `N passed, N failed`.
export default async function* summary(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    // Count tests, not the suites or files that hold them.
    if (event.data.details?.type === 'suite') continue;
    if (
      event.data.file === undefined &&
      event.data.nesting === 0 &&
      event.data.name?.endsWith('.ts')
    )
      continue;
    if (event.data.skip || event.data.todo) skipped++;
    else if (event.type === 'test:pass') passed++;
    else failed++;
  }
  yield `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`;
}

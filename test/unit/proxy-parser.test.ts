// The proxy reads upstream responses with Node's internal llhttp binding
// (`_http_common`, src/proxy/exchange.ts). It is pinned by a start-up check;
// on the Node this project runs, the check passes, and it knows what it checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parserProblem } from '../../src/proxy/exchange.js';

test('the pinned Node’s parser passes the proxy’s start-up check', () => {
  assert.equal(parserProblem(), null);
});

/**
 * Anthropic's Messages API as Claude Code calls it: `POST /v1/messages`
 * (Claude Code adds `?beta=true`), streamed as server-sent events when the
 * body asks for `stream`, and `POST /v1/messages/count_tokens`. Every
 * message gets `reply` as its one text block. The key arrives in `x-api-key`.
 */
import { StandIn, json, sse, type Recorded } from './server.js';
import type { TestCa } from '../proxy.js';

export function anthropicStandIn(ca: TestCa, reply: string): Promise<StandIn> {
  return StandIn.start(ca, (req: Recorded, res) => {
    const path = req.url.split('?')[0];
    if (req.method !== 'POST') return false;
    if (path === '/v1/messages/count_tokens') {
      json(res, 200, { input_tokens: 10 });
      return true;
    }
    if (path !== '/v1/messages') return false;
    const body = JSON.parse(req.body || '{}') as { model?: string; stream?: boolean };
    const model = body.model ?? 'claude-standin';
    const usage = { input_tokens: 10, output_tokens: 5 };
    const id = 'msg_standin';
    if (body.stream !== true) {
      json(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: reply }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage,
      });
      return true;
    }
    sse(res, [
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            id,
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 1 },
          },
        },
      ],
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply } },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 5 },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
    return true;
  });
}

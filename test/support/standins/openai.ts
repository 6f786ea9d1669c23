/**
 * OpenAI's API as Codex calls it: the Responses API (`POST /v1/responses`,
 * streamed as server-sent events ending in `response.completed`), plus chat
 * completions (`POST /v1/chat/completions`, streamed or whole) for clients
 * on the older wire format. Every request gets `reply` as the assistant's
 * one message. The key arrives in `Authorization: Bearer`.
 */
import type { ServerResponse } from 'node:http';
import { StandIn, json, sse, type Recorded } from './server.js';
import type { TestCa } from '../proxy.js';

const usage = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
};

function responses(res: ServerResponse, model: string, reply: string): void {
  const item = {
    type: 'message',
    id: 'msg_standin',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: reply, annotations: [] }],
  };
  const response = (status: string, output: unknown[]) => ({
    id: 'resp_standin',
    object: 'response',
    created_at: 0,
    status,
    model,
    output,
    usage: status === 'completed' ? usage : null,
  });
  sse(res, [
    ['response.created', { type: 'response.created', response: response('in_progress', []) }],
    [
      'response.output_item.added',
      { type: 'response.output_item.added', output_index: 0, item: { ...item, content: [] } },
    ],
    [
      'response.output_text.delta',
      {
        type: 'response.output_text.delta',
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: reply,
      },
    ],
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    ['response.completed', { type: 'response.completed', response: response('completed', [item]) }],
  ]);
}

function chat(res: ServerResponse, model: string, reply: string, stream: boolean): void {
  const base = { id: 'chatcmpl-standin', created: 0, model };
  if (!stream) {
    json(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    return;
  }
  const chunk = (delta: unknown, finish: string | null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of [chunk({ role: 'assistant', content: reply }, null), chunk({}, 'stop')]) {
    res.write(`data: ${JSON.stringify(c)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

export function openaiStandIn(ca: TestCa, reply: string): Promise<StandIn> {
  return StandIn.start(ca, (req: Recorded, res) => {
    const path = req.url.split('?')[0];
    if (req.method !== 'POST') return false;
    const body = JSON.parse(req.body || '{}') as { model?: string; stream?: boolean };
    const model = body.model ?? 'gpt-standin';
    if (path === '/v1/responses') responses(res, model, reply);
    else if (path === '/v1/chat/completions') chat(res, model, reply, body.stream === true);
    else return false;
    return true;
  });
}

/**
 * Google's Gemini API as Gemini CLI calls it with an API key:
 * `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent`
 * (server-sent events with `?alt=sse`) and `:countTokens`. Every request
 * gets `reply` as the model's one text part. The key arrives in
 * `x-goog-api-key`.
 */
import { StandIn, json, sse, type Recorded } from './server.js';
import type { TestCa } from '../proxy.js';

interface Schema {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
}

/**
 * The smallest value `schema` accepts. Gemini CLI asks a small model for JSON
 * first (its router scores the prompt's complexity) and retries until the
 * answer parses, so a stand-in that only ever says `reply` never gets to the
 * real turn.
 */
function fill(schema: Schema): unknown {
  if (schema.enum !== undefined && schema.enum.length > 0) return schema.enum[0];
  switch ((schema.type ?? 'object').toLowerCase()) {
    case 'object':
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fill(v)]),
      );
    case 'array':
      return [];
    case 'string':
      return 'stand-in';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

export function geminiStandIn(ca: TestCa, reply: string): Promise<StandIn> {
  return StandIn.start(ca, (req: Recorded, res) => {
    const m = /^\/v1(?:beta|alpha|)\/models\/([^/:]+):([A-Za-z]+)$/.exec(
      req.url.split('?')[0] ?? '',
    );
    if (req.method !== 'POST' || m === null) return false;
    const [, model, method] = m;
    const config = (
      JSON.parse(req.body || '{}') as {
        generationConfig?: { responseMimeType?: string; responseJsonSchema?: Schema };
      }
    ).generationConfig;
    const text =
      config?.responseMimeType === 'application/json'
        ? JSON.stringify(fill(config.responseJsonSchema ?? {}))
        : reply;
    const answer = {
      candidates: [
        {
          content: { role: 'model', parts: [{ text }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: model,
    };
    if (method === 'countTokens') json(res, 200, { totalTokens: 10 });
    else if (method === 'generateContent') json(res, 200, answer);
    else if (method === 'streamGenerateContent') sse(res, [[null, answer]]);
    else return false;
    return true;
  });
}

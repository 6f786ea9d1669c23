/**
 * The host's side of the framed channel (src/core/frames.ts): an agent's
 * requests on one kept connection, read as frames and answered by id as each
 * is ready. Every frame that arrives in one read is judged on its own, and
 * all of them join the same group commit (context.ts commitGrouped), so a
 * proxy's concurrent fills cost one message each way, not one per fill.
 *
 * What the host checks of an HTTP request holds for every frame: the caller
 * is the connection's peer as the kernel recorded it when it connected
 * (nothing in a frame names a caller); a payload is at most MAX_BODY, and
 * what it keeps beyond FREE_BYTES is drawn from the intake pool before its
 * bytes are read, or it is read and dropped unkept and refused (VLT-3012),
 * and all the frames of a connection share one FREE_BYTES as an HTTP
 * connection's one request does (so many small frames in flight hold no more
 * outside the pool than one request would); a
 * frame begun must be whole within FRAME_WITHIN_MS or the connection goes; and
 * only CHANNEL_OPS are served (owner commands keep HTTP, where the client
 * checks the host first). The per-process connection cap was applied when the
 * connection was accepted (server.ts).
 */
import type { Socket } from 'node:net';
import { CHANNEL_OPS, FrameReader, GOODBYE, replyFrame, splitRequest } from '../../core/frames.js';
import type { Op } from '../../core/protocol.js';
import { FREE_BYTES, Held, MAX_BODY, type Intake } from './intake.js';

/** How long a frame may take to arrive whole once it has begun. */
const FRAME_WITHIN_MS = 5_000;
/** An idle connection is closed after this (as HTTP keep-alive was): a proxy left alone keeps no host alive. */
const IDLE_MS = 5_000;
/** The operation's name and its length byte, on top of the body. */
const MAX_PAYLOAD = MAX_BODY + 256;

export interface ChannelHost {
  readonly intake: Intake;
  /** One request's reply (`{ ok, ... }`); never throws. */
  readonly answer: (op: Op, body: Record<string, unknown>) => Promise<object>;
  /** Something happened: the host is not idle. */
  readonly touch: () => void;
}

/** A frame's share of what the host holds: drawn from the pool, and from the connection's own FREE_BYTES. */
interface Kept {
  readonly held: Held;
  own: number;
}

const refused = (code: string, message: string) => ({ ok: false, code, message });

/** Serves the channel on `socket`, whose upgrade the host accepted; `first` came with the upgrade. */
export function serveChannel(socket: Socket, first: Buffer, host: ChannelHost): void {
  socket.setNoDelay(true);
  let inFlight = 0;
  let closing = false;
  let corked = false;
  let timer: NodeJS.Timeout | undefined;
  /** When the frame now arriving began (ms), or null between frames. */
  let begun: number | null = null;
  /** What the frame now arriving keeps: of the pool, and of the connection's FREE_BYTES. */
  let arriving: Kept | null = null;
  let free = FREE_BYTES;
  const release = (kept: Kept) => {
    host.intake.release(kept.held);
    free += kept.own;
    kept.own = 0;
  };

  const send = (id: number, reply: object) => {
    if (socket.destroyed || socket.writableEnded) return;
    // The replies one group commit settles go out in one write.
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    socket.write(replyFrame(id, JSON.stringify(reply)));
    // A client that does not read its replies is not read either: they would pile up here.
    if (socket.writableNeedDrain && !socket.isPaused()) {
      socket.pause();
      socket.once('drain', () => socket.resume());
    }
  };

  /** Says why, and reads nothing more on this connection. */
  const cut = (id: number, code: string, message: string) => {
    send(id, refused(code, message));
    close();
  };

  const close = () => {
    closing = true;
    clearTimeout(timer);
    reader.wipe();
    if (arriving !== null) release(arriving);
    arriving = null;
    socket.end();
    // A client that never closes its side is not waited for.
    setTimeout(() => socket.destroy(), FRAME_WITHIN_MS).unref();
  };

  const rearm = () => {
    clearTimeout(timer);
    if (closing) return;
    if (reader.partial) {
      begun ??= Date.now();
      timer = setTimeout(() => socket.destroy(), begun + FRAME_WITHIN_MS - Date.now());
    } else if (inFlight === 0) {
      timer = setTimeout(() => {
        send(GOODBYE, { ok: true, goodbye: true });
        close();
      }, IDLE_MS);
    }
  };

  const handle = async (id: number, payload: Buffer, kept: Kept) => {
    inFlight++;
    host.touch();
    try {
      const request = splitRequest(payload);
      if (request === null || !CHANNEL_OPS.has(request.op as Op)) {
        send(id, refused('VLT-1001', 'No such operation on the host channel.'));
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(request.body.toString('utf8'));
      } catch {
        body = null;
      }
      payload.fill(0);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        send(id, refused('VLT-1001', 'Bad request: body is not a JSON object.'));
        return;
      }
      send(id, await host.answer(request.op as Op, body as Record<string, unknown>));
    } finally {
      payload.fill(0);
      release(kept);
      inFlight--;
      rearm();
    }
  };

  const reader = new FrameReader({
    head: (id, length) => {
      if (id === GOODBYE) {
        cut(id, 'VLT-1001', 'Bad request: frame id 0 is the host’s.');
        return false;
      }
      if (length > MAX_PAYLOAD) {
        cut(
          id,
          'VLT-1002',
          `The request is larger than the host accepts (${MAX_BODY / 1024 / 1024} MiB); a value that large cannot be stored.`,
        );
        return false;
      }
      const own = Math.min(length, free);
      const held = new Held();
      // keep() draws what passes FREE_BYTES: here, what the connection's own share does not cover.
      if (!host.intake.keep(held, length - own + FREE_BYTES)) return false;
      free -= own;
      arriving = { held, own };
      return true;
    },
    frame: (id, payload) => {
      const kept = arriving ?? { held: new Held(), own: 0 };
      arriving = null;
      begun = null;
      void handle(id, payload, kept);
    },
    dropped: (id) => {
      begun = null;
      if (closing) return;
      send(
        id,
        refused(
          'VLT-3012',
          'The vault host holds as many request bytes as it accepts; try again once some are answered.',
        ),
      );
    },
  });

  const onData = (c: Buffer) => {
    if (closing) {
      c.fill(0);
      return;
    }
    reader.push(c);
    rearm();
  };
  socket.on('data', onData);
  socket.on('error', () => socket.destroy());
  socket.once('close', () => {
    closing = true;
    clearTimeout(timer);
    reader.wipe();
    if (arriving !== null) release(arriving);
    arriving = null;
  });
  if (first.length > 0) onData(first);
  else rearm();
}

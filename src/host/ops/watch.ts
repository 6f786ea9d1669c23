/**
 * `render --watch`'s change feed: an agent's token and the entry names its
 * template uses; one line when the feed is in place, then `{"changed":true}`
 * each time one of those entries that it may read changes (entry-watch.ts),
 * until the client goes away or the token can read nothing more. No value
 * travels here: the client renders again with an ordinary, audited `resolve`.
 */
import { watchOf, watchedState } from '../entries/watch.js';
import { asAgent, type OpArea } from './op.js';

/**
 * Also checked on a timer, for a change a commit event does not announce (a
 * store another process writes): a read of a few records' metadata, no value.
 */
const WATCH_POLL_MS = 1000;

export const watchOps: OpArea<'watch'> = {
  watch: {
    stream: async (env, req, res) => {
      const { ctx } = env;
      const w = await asAgent(env, req, (session) => watchOf(session, req.body.entries));
      const state = () => ctx.store().read((tx) => watchedState(tx, ctx.now(), w));
      let last = state();
      res.useChunkedEncodingByDefault = false;
      // A feed is quiet until a watched value changes, for hours maybe: the
      // idle cut a session's socket puts on every connection (10 s,
      // session-sockets.ts) would end it while its token is good, and the
      // watcher would stop hearing of changes. It ends with its session.
      res.setTimeout(0);
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
      res.write('{"watching":true}\n');
      const check = () => {
        let now: string | null;
        try {
          now = state();
        } catch {
          return; // the store is closing with the host; the connection ends with it
        }
        if (now === null) {
          res.end();
          return;
        }
        if (now === last) return;
        last = now;
        res.write('{"changed":true}\n');
      };
      // A burst of commits (a busy host: every read commits an audit record)
      // costs one check per watcher, not one per commit.
      let due: NodeJS.Immediate | undefined;
      const soon = () => {
        due ??= setImmediate(() => {
          due = undefined;
          check();
        });
      };
      env.followers.count++;
      ctx.events.on('commit', soon);
      const poll = setInterval(soon, WATCH_POLL_MS);
      res.on('close', () => {
        env.followers.count--;
        ctx.events.off('commit', soon);
        clearInterval(poll);
        clearImmediate(due);
      });
      if (last === null) res.end();
    },
  },
};

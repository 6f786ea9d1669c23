// A connection flood, as anyone who can reach a port can make one: opens
// `count` plain TCP connections to host:port (no TLS, no bytes), keeps them
// open, and opens a new one for each the server closes. Prints
// `opened <n> held <m>` once all `count` were opened, then runs until killed.
// `from`: the local address to connect from (another loopback address, as
// a flooder on another machine would have), else the kernel's choice.
//   node tcp-flood.mjs <host> <port> <count> [<from>]
import { connect } from 'node:net';

const [host, portText, countText, from] = process.argv.slice(2);
const port = Number(portText);
const count = Number(countText);
let opened = 0;
let held = 0;
let told = false;

function open() {
  const s = connect({ host, port, ...(from === undefined ? {} : { localAddress: from }) });
  s.on('error', () => {});
  s.on('connect', () => {
    opened++;
    held++;
    if (!told && opened >= count) {
      told = true;
      process.stdout.write(`opened ${opened} held ${held}\n`);
    }
  });
  s.on('close', (hadConnected) => {
    if (s.connecting === false && hadConnected !== undefined) held = Math.max(0, held - 1);
    // The server closed it: the flood takes its place again, a little later.
    setTimeout(open, 20);
  });
}

// Not all at once: a burst of `count` connects overruns the listen backlog.
let started = 0;
const burst = setInterval(() => {
  for (let i = 0; i < 500 && started < count; i++, started++) open();
  if (started >= count) clearInterval(burst);
}, 10);

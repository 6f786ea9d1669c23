/**
 * "This machine", for the proxy of a sandboxed `run` session: the sandbox has
 * no route out but the proxy, so without this check a service on the owner's
 * loopback (a database, a Docker API, a dev server) or a link-local one (a
 * cloud metadata service) is one CONNECT away from the agent. An address is
 * this machine's when it is loopback, unspecified, link-local, or one of this
 * machine's interface addresses; a name is when any address it resolves to is.
 * The connection then goes through `confinedLookup`, so a name that resolves
 * elsewhere when judged and here when connected (DNS rebinding) fails too.
 */
import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
const NEARBY = new BlockList();
NEARBY.addSubnet('127.0.0.0', 8, 'ipv4');
NEARBY.addSubnet('0.0.0.0', 8, 'ipv4');
NEARBY.addSubnet('169.254.0.0', 16, 'ipv4');
NEARBY.addAddress('::1', 'ipv6');
NEARBY.addAddress('::', 'ipv6');
NEARBY.addSubnet('fe80::', 10, 'ipv6');
/** An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 one. */
function unmapped(address) {
    const m = /^::ffff:([0-9.]+)$/i.exec(address);
    return m !== null && isIP(m[1]) === 4 ? m[1] : address;
}
/** Whether `address` (an IP literal) is this machine's. */
export function isLocalAddress(address) {
    const a = unmapped(address.replace(/%.*$/, ''));
    const family = isIP(a);
    if (family === 0)
        return false;
    if (NEARBY.check(a, family === 6 ? 'ipv6' : 'ipv4'))
        return true;
    for (const list of Object.values(networkInterfaces())) {
        for (const i of list ?? [])
            if (unmapped(i.address).toLowerCase() === a.toLowerCase())
                return true;
    }
    return false;
}
/** Whether `host` (a name or an IP literal) is, or resolves to, this machine; a name that does not resolve is not. */
export async function isLocalHost(host) {
    if (isIP(host) !== 0)
        return isLocalAddress(host);
    try {
        const found = await lookup(host, { all: true, verbatim: true });
        return found.some((f) => isLocalAddress(f.address));
    }
    catch {
        return false;
    }
}
/** A `lookup` for net/tls/http connections that fails when the name leads to this machine. */
export function confinedLookup(hostname, options, cb) {
    dnsLookup(hostname, { ...options, all: true }, (err, found) => {
        if (err !== null)
            return cb(err, []);
        if (found.some((f) => isLocalAddress(f.address))) {
            const e = new Error(`${hostname} leads to this machine`);
            e.code = 'EVAULTLOCAL';
            return cb(e, []);
        }
        if (options.all === true)
            return cb(null, found);
        const first = found[0];
        if (first === undefined)
            return cb(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), []);
        cb(null, first.address, first.family);
    });
}
/** This machine's loopback addresses (IPv4-mapped IPv6 ones included). */
const LOOPBACK_NET = new BlockList();
LOOPBACK_NET.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_NET.addAddress('::1', 'ipv6');
/**
 * The loopback address `host` resolves to, or null when it does not resolve
 * or any address it resolves to is not this machine's loopback: plain HTTP
 * carries a value only to this machine, judged by where the name leads, not
 * by how it is spelled.
 */
export async function loopbackAddress(host) {
    let found;
    try {
        found = await lookup(host, { all: true, verbatim: true });
    }
    catch {
        return null;
    }
    const local = (a) => LOOPBACK_NET.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4');
    return found.length > 0 && found.every(local) ? (found[0]?.address ?? null) : null;
}

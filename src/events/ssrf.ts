import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/**
 * SSRF guard for subscription URLs. At save time the host name is resolved and
 * every address must be public; at connect time request-filtering-agent checks
 * the address actually dialled, so a name that later resolves to a private
 * address (DNS rebinding) is refused too. Both refuse the same thing: anything
 * that is not ordinary public unicast.
 */

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (also some cloud metadata, 100.100.100.200)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
// IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) are checked against the IPv4 rules by BlockList itself.
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64
  ['100::', 64],
  ['2001::', 32], // Teredo
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local (AWS metadata fd00:ec2::254)
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class TargetRefusedError extends Error {}

/** Save-time check: the URL's host must resolve, and only to public addresses. */
export async function assertPublicTarget(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      throw new TargetRefusedError(`The host ${host} does not resolve`);
    }
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused) throw new TargetRefusedError(`The host ${host} resolves to ${refused}, a private, loopback, link-local or reserved address`);
}

export interface TargetAgents {
  http: http.Agent;
  https: https.Agent;
}

/** Keep-alive agents for deliveries; filtering unless private targets are allowed. */
export function targetAgents(allowPrivate: boolean, maxSockets: number): TargetAgents {
  const options = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' as const };
  if (allowPrivate) return { http: new http.Agent(options), https: new https.Agent(options) };
  return { http: new RequestFilteringHttpAgent(options), https: new RequestFilteringHttpsAgent(options) };
}

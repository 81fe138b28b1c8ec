// Which answer a parsed request gets on the [metrics] listener (gateway/contract/status.md, "The listener"), the
// Host names it accepts, and the page's Content-Security-Policy: pure functions, no I/O.

import { createHash } from 'node:crypto';
import { BlockList, isIPv6 } from 'node:net';

const PATHS = new Set(['/', '/status.json', '/metrics', '/healthz']);
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const WILDCARDS = new Set(['', '0.0.0.0', '::']);
/** Answers after which the connection is closed. */
export const CLOSING = new Set([400, 408, 413, 421, 431]);

const HOST = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*))(?::[0-9]+)?$/;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** An IP literal as the contract spells one (dotted decimal, or IPv6 with or without brackets): {address, family}. */
function ipLiteral(text) {
  if (IPV4.test(text)) return { address: text, family: 'ipv4' };
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return bare.includes(':') && !bare.includes('%') && isIPv6(bare) ? { address: bare, family: 'ipv6' } : null;
}

function sameAddress(a, b) {
  if (a === null || b === null || a.family !== b.family) return false;
  const list = new BlockList();
  list.addAddress(a.address, a.family);
  return list.check(b.address, b.family);
}

const loopback = (ip) => ip !== null && LOOPBACK.check(ip.address, ip.family);

/** The NAME of a Host value (IPv6 kept in brackets), or null when the value is not NAME or NAME:PORT. */
function hostName(value) {
  const match = HOST.exec(value);
  if (match === null) return null;
  if (match[1] !== undefined) return ipLiteral(match[1]) === null ? null : `[${match[1]}]`;
  return match[2];
}

/** The listen address's HOST (as configured) and [metrics] host_names. */
export function listener(listen, hostNames = []) {
  return { host: listen.slice(0, Math.max(listen.lastIndexOf(':'), 0)), hostNames };
}

/** Whether a Host NAME (from hostName) may be answered on this listener (rule 6). */
function hostAccepted(name, where) {
  const lowered = name.toLowerCase();
  if (where.hostNames.some((listed) => listed.toLowerCase() === lowered)) return true;
  const ip = ipLiteral(name);
  const own = ipLiteral(where.host);
  if (lowered === where.host.toLowerCase() || sameAddress(ip, own)) return true;
  if (WILDCARDS.has(where.host)) return ip !== null || lowered === 'localhost';
  if (where.host.toLowerCase() === 'localhost' || loopback(own)) return loopback(ip) || lowered === 'localhost';
  return false;
}

/**
 * The answer for a request whose head met the grammar (rule 1 is the parser's): {status, serve} (serve: the path
 * served for a 200, else null).
 * @param {{method: string, target: string, version: string, hosts: string[], contentLength: string|null,
 *   transferEncoding: string|null}} request
 */
export function decide(request, where) {
  const refuse = (status) => ({ status, serve: null });
  const { method, target, version, hosts, contentLength, transferEncoding } = request;
  if (version !== '1.1' && version !== '1.0') return refuse(400);
  if (!KNOWN_METHODS.has(method)) return refuse(400);
  if (version === '1.1' ? hosts.length !== 1 : hosts.length > 1) return refuse(400);
  const names = hosts.map(hostName);
  if (names.includes(null)) return refuse(400);
  if (contentLength !== null && (!/^[0-9]+$/.test(contentLength) || transferEncoding !== null)) return refuse(400);
  if (transferEncoding !== null || (contentLength !== null && Number(contentLength) !== 0)) return refuse(413);
  if (names.length > 0 && !hostAccepted(names[0], where)) return refuse(421);
  if (method !== 'GET' && method !== 'HEAD') return refuse(405);
  const path = target.split('?', 1)[0];
  if (!target.startsWith('/') || !PATHS.has(path)) return refuse(404);
  return { status: 200, serve: path };
}

function inlineHashes(page, tag) {
  return [...page.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))]
    .map((match) => `'sha256-${createHash('sha256').update(match[1], 'utf8').digest('base64')}'`).join(' ');
}

/** The Content-Security-Policy of the page: its own inline script and style by hash, status.json from itself. */
export function pageCsp(page) {
  const text = page.toString('utf8');
  return `default-src 'none'; script-src ${inlineHashes(text, 'script')}; style-src ${inlineHashes(text, 'style')}; `
    + "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}

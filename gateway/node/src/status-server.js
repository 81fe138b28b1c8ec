// The [metrics] listen endpoint: Prometheus' text exposition of one registry at /metrics, and the status page at /
// and /status.json, over plain HTTP (an empty HOST: every IPv4 interface, 0.0.0.0), with the limits and rules of
// gateway/contract/status.md, "The listener": Node's parser frames and checks each head, http-rules.js decides.

import http from 'node:http';

import { contractNumber } from './contract-constants.js';
import { answered, headParsed, opened, tick } from './head-clock.js';
import { CLOSING, decide, listener, pageCsp } from './http-rules.js';
import { ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog, event } from './logs.js';
import { PAGE } from './status-page.js';

// A request's head complete within this; enforced by head-clock.js, Node's own check behind.
const HEAD_MS = contractNumber('http_head_timeout_ms');
const TICK_MS = 250; // how often the head clocks are read: a late head is refused at most this much late
const LIMITS = {
  maxHeaderSize: contractNumber('http_head_bytes_max'), // request line and header fields
  headersTimeout: HEAD_MS, // Node's own head check, a second line behind the head clocks
  requestTimeout: 10000, // must not be below headersTimeout; no body is read anyway
  keepAliveTimeout: HEAD_MS, // a connection idle after an answer is closed (status.md)
  connectionsCheckingInterval: 500, // how often the head timeout is checked (default 30 s)
  requireHostHeader: false, // http-rules.js refuses a missing Host itself, with the headers every answer has
};
const MAX_CONNECTIONS = contractNumber('http_connections_max');
// A client that pipelines requests without reading the answers: closed, not answered into memory without end.
// Requests on one connection whose answers are not yet written.
const MAX_WAITING = contractNumber('http_pipelined_max');
const MAX_UNREAD = contractNumber('http_unread_bytes_max'); // bytes of answers written but not yet taken by the client
// A connection whose answers the client does not take for this long.
const STALLED_MS = contractNumber('http_unread_timeout_ms');
const WAITING = Symbol('answers waiting');
const REFUSED = Symbol('refused'); // a refusal was written: nothing more is answered or counted on the socket
const PAGE_CSP = pageCsp(PAGE);
const LOG = new RateLimitedLog({ intervalS: LONG_INTERVAL_S });
const TEXTS = { 400: 'bad request', 404: 'not found; try /, /status.json, /metrics or /healthz', 405: 'only GET and HEAD',
  408: 'the request head took over 5 s', 413: 'no request body is read here',
  421: 'this Host name is not served here (status.md: [metrics] host_names)',
  431: `the request head is over ${contractNumber('http_head_bytes_max')} bytes` };
const REASONS = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * Splits "HOST:PORT" at its last colon (so "::1:9108" is host ::1); an empty host
 * is 0.0.0.0. The config has checked the port already.
 */
export function parseListen(listen) {
  const colon = listen.lastIndexOf(':');
  if (colon < 0) throw new Error(`metrics listen must be HOST:PORT, not ${JSON.stringify(listen)}`);
  return { host: listen.slice(0, colon) || '0.0.0.0', port: Number(listen.slice(colon + 1)) };
}

/** The request as http-rules.js reads it. */
function parsed(request) {
  const { headers } = request;
  return { method: request.method, target: request.url, version: request.httpVersion,
    hosts: request.headersDistinct.host ?? [], contentLength: headers['content-length'] ?? null,
    transferEncoding: headers['transfer-encoding'] ?? null };
}

function refuse(response, status, head, close) {
  const body = head ? '' : `${TEXTS[status]}\n`;
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body),
    ...(status === 405 ? { Allow: 'GET, HEAD' } : {}), ...(close ? { Connection: 'close' } : {}) });
  response.end(body);
}

/** Answers a parsed request on response: the decision, then the path's content; count(status) for every answer
 * but a 200. Never throws. */
function answer(request, response, { where, registry, statusPage, count }) {
  const { status, serve } = decide(parsed(request), where);
  const head = request.method === 'HEAD';
  const close = CLOSING.has(status) || request.httpVersion !== '1.1';
  response.setHeader('X-Content-Type-Options', 'nosniff');
  if (close) response.setHeader('Connection', 'close');
  if (status !== 200 || (serve !== '/metrics' && statusPage === null)) {
    count(status === 200 ? 404 : status);
    refuse(response, status === 200 ? 404 : status, head, close);
    return;
  }
  const failed = (error) => { // a bug or the spool closing: the client sees it, nothing is thrown on
    count(500);
    try {
      response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${serve} failed: ${error.message}\n`);
    } catch {
      response.destroy();
    }
  };
  const send = (type, body, extra = {}) => {
    response.writeHead(200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...extra });
    response.end(head ? '' : body);
  };
  if (serve === '/metrics') {
    registry.metrics().then((text) => send(registry.contentType, text)).catch(failed);
  } else if (serve === '/') {
    send('text/html; charset=utf-8', PAGE, { 'Cache-Control': 'no-store', 'Content-Security-Policy': PAGE_CSP });
  } else if (serve === '/healthz') { // a 503 here is this path's answer, not a refusal: not counted
    try {
      const [code, reason] = statusPage.health();
      response.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8',
        'Content-Length': Buffer.byteLength(`${reason}\n`), 'Cache-Control': 'no-store' });
      response.end(head ? '' : `${reason}\n`);
    } catch (error) {
      failed(error);
    }
  } else {
    statusPage.document().then((doc) => send('application/json', JSON.stringify(doc), { 'Cache-Control': 'no-store' }))
      .catch(failed);
  }
}

/**
 * Destroys a socket that pipelined more than it reads. Node aborts each request of it still waiting (all the rest
 * of the flood already read) with an error whose stack trace costs far more than the request did: those traces
 * are switched off while the socket's close runs.
 */
function closeFlooded(socket) {
  let limit;
  socket.prependOnceListener('close', () => {
    limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
  });
  socket.once('close', () => { Error.stackTraceLimit = limit; });
  socket.destroy();
}

/** A refusal written straight to a socket whose bytes the parser refused (or that timed out). */
function refuseRaw(socket, status) {
  socket[REFUSED] = true;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = `${TEXTS[status]}\n`;
  socket.end(`HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n`
    + `X-Content-Type-Options: nosniff\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
}

/** The parser's verdicts (status.md, rule 1 and the limits): the head too long, too slow, or not HTTP/1.x. */
function clientError(error, socket, count) {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || socket[REFUSED]) {
    socket.destroy();
  } else {
    const status = { HPE_HEADER_OVERFLOW: 431, ERR_HTTP_REQUEST_TIMEOUT: 408 }[error.code] ?? 400;
    count(status);
    refuseRaw(socket, status);
  }
}

/** A head that came too late on socket (head-clock.js): 408 and closed, as Node's own check would. */
function headLate(socket, count) {
  if (socket[REFUSED] || socket.destroyed) return;
  count(408);
  refuseRaw(socket, 408);
  const gone = setTimeout(() => socket.destroy(), 1000); // the 408 had its second to leave; the client's bytes don't
  gone.unref();
  socket.once('finish', () => socket.destroy());
  socket.once('close', () => clearTimeout(gone));
}

/**
 * The listener's own head timeout beside Node's: one clock a connection (head-clock.js), all read every TICK_MS.
 * Returns the hooks for a parsed request and a done answer, and stop().
 */
function watchHeads(server, count) {
  const clocks = new Map();
  server.on('connection', (socket) => {
    clocks.set(socket, opened(performance.now(), socket.bytesRead));
    socket.once('close', () => clocks.delete(socket));
  });
  const update = (socket, change) => {
    const clock = clocks.get(socket);
    if (clock !== undefined) clocks.set(socket, change(clock));
  };
  const ticker = setInterval(() => {
    const now = performance.now();
    for (const [socket, clock] of clocks) {
      const [next, action] = tick(clock, now, socket.bytesRead, HEAD_MS);
      if (action === null) {
        clocks.set(socket, next);
        continue;
      }
      clocks.delete(socket);
      if (action === 'refuse') headLate(socket, count);
      else socket.destroy(); // idle after its answers: closed without one
    }
  }, TICK_MS);
  ticker.unref();
  return {
    parsed: (socket) => update(socket, headParsed),
    done: (socket) => update(socket, (clock) => answered(clock, performance.now(), socket.bytesRead)),
    stop: () => clearInterval(ticker),
  };
}

/**
 * Serves GET (and HEAD) /metrics from registry, and / and /status.json from statusPage (when given), on listen
 * ("HOST:PORT"; port 0: any free port), per status.md's rules (Host names: the listen HOST's and hostNames).
 * Resolves once listening, with the port bound and close(); rejects with "cannot serve metrics on HOST:PORT:
 * <reason>" (the cause and its code attached) if it cannot listen.
 * @param {string} listen
 * @param {import('prom-client').Registry} registry
 * @param {import('./status-page.js').StatusPage|null} [statusPage]
 * @param {string[]} [hostNames] [metrics] host_names
 * @returns {Promise<{port: number, close(): Promise<void>}>}
 */
export function startStatusServer(listen, registry, statusPage = null, hostNames = []) {
  const { host, port } = parseListen(listen);
  const refused = registry.getSingleMetric('telemetry_gateway_http_refused_total'); // absent from a bare registry
  const count = (status) => refused?.inc({ status: String(status) });
  const parts = { where: listener(listen, hostNames), registry, statusPage, count };
  let heads = null;
  const handle = (request, response) => {
    const { socket } = request;
    if (socket.destroyed || socket[REFUSED]) return; // the rest of a flood already read, or after a refusal
    heads.parsed(socket);
    socket[WAITING] = (socket[WAITING] ?? 0) + 1;
    response.once('close', () => {
      socket[WAITING] -= 1;
      heads.done(socket);
    });
    if (socket[WAITING] > MAX_WAITING || socket.writableLength > MAX_UNREAD) {
      count('unread');
      closeFlooded(socket);
      return;
    }
    try {
      answer(request, response, parts);
    } catch (error) { // a bug: this request fails, the listener and the gateway run on
      LOG.event('warning', 'status_request_failed', { error: String(error.message).slice(0, ERROR_CHARS) });
      response.destroy();
    }
  };
  const server = http.createServer(LIMITS, handle);
  server.maxConnections = MAX_CONNECTIONS;
  heads = watchHeads(server, count);
  server.timeout = STALLED_MS; // no byte read or written for this long: the socket is destroyed
  server.on('drop', () => count('dropped')); // a connection over the bound, closed unanswered
  server.on('clientError', (error, socket) => clientError(error, socket, count));
  // CONNECT and Upgrade requests are decided like any other and never change protocol: each gets a response of its
  // own on its socket, which then closes.
  const detached = (request, socket) => {
    socket.on('error', () => socket.destroy());
    try {
      const response = new http.ServerResponse(request);
      response.shouldKeepAlive = false;
      response.assignSocket(socket);
      response.on('finish', () => socket.destroySoon());
      handle(request, response);
    } catch {
      socket.destroy();
    }
  };
  server.on('connect', detached);
  server.on('upgrade', detached);
  return new Promise((resolve, reject) => {
    const failed = (error) => {
      heads.stop();
      reject(Object.assign(new Error(`cannot serve metrics on ${listen}: ${error.message}`),
        { cause: error, code: error.code }));
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      server.on('error', (error) => event('warning', 'metrics_server_error', { error: error.message }));
      resolve({ port: server.address().port, close: () => { heads.stop(); return close(server); } });
    });
  });
}

function close(server) {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections(); // keep-alive scrapers would hold close() until they hang up
  });
}

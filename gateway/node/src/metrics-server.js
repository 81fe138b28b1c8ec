// The [metrics] listen endpoint: Prometheus' text exposition of one registry at /metrics, and the status page at /
// and /status.json (gateway/contract/status.md), over plain HTTP (an empty HOST: every IPv4 interface, 0.0.0.0).

import http from 'node:http';

import { event } from './logs.js';
import { PAGE } from './status-page.js';

const PATHS = new Set(['/metrics', '/', '/status.json']);

/**
 * Splits "HOST:PORT" at its last colon (so "::1:9108" is host ::1); an empty host
 * is 0.0.0.0. The config has checked the port already.
 */
export function parseListen(listen) {
  const colon = listen.lastIndexOf(':');
  if (colon < 0) throw new Error(`metrics listen must be HOST:PORT, not ${JSON.stringify(listen)}`);
  return { host: listen.slice(0, colon) || '0.0.0.0', port: Number(listen.slice(colon + 1)) };
}

/** Answers / (the contract's status.html) and /status.json from statusPage. */
function serveStatus(path, response, statusPage) {
  const headers = { 'Cache-Control': 'no-store' };
  if (path === '/') {
    response.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
    return;
  }
  statusPage.document().then(
    (doc) => response.writeHead(200, { ...headers, 'Content-Type': 'application/json' }).end(JSON.stringify(doc)),
    (error) => response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
      .end(`status failed: ${error.message}\n`),
  );
}

/**
 * Serves GET (and HEAD) /metrics from registry, and / and /status.json from statusPage (when given), on listen
 * ("HOST:PORT"; port 0: any free port); 404 on any other path, 405 on other methods. Resolves once listening, with
 * the port bound and close(); rejects with "cannot serve metrics on HOST:PORT: <reason>" (the cause and its code
 * attached) if it cannot listen.
 * @param {string} listen
 * @param {import('prom-client').Registry} registry
 * @param {import('./status-page.js').StatusPage|null} [statusPage]
 * @returns {Promise<{port: number, close(): Promise<void>}>}
 */
export function startMetricsServer(listen, registry, statusPage = null) {
  const { host, port } = parseListen(listen);
  const server = http.createServer((request, response) => {
    const path = new URL(request.url, 'http://metrics').pathname;
    if (!PATHS.has(path) || (path !== '/metrics' && statusPage === null)) {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('not found; try /, /status.json or /metrics\n');
    } else if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD' }).end();
    } else if (path !== '/metrics') {
      serveStatus(path, response, statusPage);
    } else {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (error) => response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end(`collecting metrics failed: ${error.message}\n`),
      );
    }
  });
  return new Promise((resolve, reject) => {
    const failed = (error) => {
      reject(Object.assign(new Error(`cannot serve metrics on ${listen}: ${error.message}`),
        { cause: error, code: error.code }));
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      server.on('error', (error) => event('warning', 'metrics_server_error', { error: error.message }));
      resolve({ port: server.address().port, close: () => close(server) });
    });
  });
}

function close(server) {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections(); // keep-alive scrapers would hold close() until they hang up
  });
}

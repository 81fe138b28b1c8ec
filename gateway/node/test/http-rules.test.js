// The listener's decisions (http-rules.js) against gateway/contract/vectors/http_requests.jsonl, which every
// gateway runs, and the page's policy; the bytes on a real socket: gateway/conformance/test_http_fuzz.py.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';

import { decide, listener, pageCsp } from '../src/http-rules.js';
import { contractVectors } from '../test-support/vectors.js';

describe('http_requests.jsonl', () => {
  for (const c of contractVectors('http_requests.jsonl')) {
    it(c.note, () => {
      const r = c.request;
      const request = { method: r.method, target: r.target, version: r.version, hosts: r.hosts,
        contentLength: r.content_length, transferEncoding: r.transfer_encoding };
      assert.deepEqual(decide(request, listener(c.listen, c.host_names)), { status: c.status, serve: c.serve ?? null });
    });
  }
});

describe('the page policy', () => {
  it('allows its inline script and style by hash, and nothing else', () => {
    const hash = (text) => createHash('sha256').update(text).digest('base64');
    assert.equal(pageCsp(Buffer.from('<style>a{}</style><script>x()</script>')),
      `default-src 'none'; script-src 'sha256-${hash('x()')}'; style-src 'sha256-${hash('a{}')}'; `
      + "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  });
});

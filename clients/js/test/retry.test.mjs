// The client's retries against a local HTTP server that misbehaves as real ones do: a 429 is sent
// again after its Retry-After; a connection closed before any answer (a keep-alive socket the
// server dropped while it sat idle) is sent again only when that is safe, and a create carries one
// Idempotency-Key across its attempts; an attempt slower than the timeout is aborted.
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";

import { Strata, StrataError, retryingFetch } from "../dist/index.js";

async function serve(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

test("a create whose connection is dropped is sent again with the same Idempotency-Key", async () => {
  const keys = [];
  const { server, url } = await serve((req, res) => {
    keys.push(req.headers["idempotency-key"]);
    if (keys.length === 1) { req.socket.destroy(); return; }  // closed before any answer
    res.writeHead(201, { "content-type": "application/json" }).end("{}");
  });
  try {
    const response = await retryingFetch(fetch, 3)(`${url}/v1/memories`, { method: "POST", body: "{}" });
    assert.equal(response.status, 201);
    assert.equal(keys.length, 2);
    assert.ok(keys[0] && keys[0] === keys[1]);
  } finally { server.close(); }
});

test("a write the API does not key is not sent again after a dropped connection", async () => {
  let seen = 0;
  const { server, url } = await serve((req) => { seen += 1; req.socket.destroy(); });
  try {
    await assert.rejects(retryingFetch(fetch, 3)(`${url}/v1/keys`, { method: "POST", body: "{}" }));
    assert.equal(seen, 1);
  } finally { server.close(); }
});

test("a 429 is sent again after its Retry-After, then the answer is the API's", async () => {
  const seen = [];
  let retryAfter = "0";
  const { server, url } = await serve((req, res) => {
    seen.push(req.headers["idempotency-key"]);
    if (seen.length % 3 !== 0) {
      res.writeHead(429, { "content-type": "application/json", "retry-after": retryAfter })
        .end('{"error": {"code": "rate_limited", "message": "slow down", "request_id": "req_1"}}');
      return;
    }
    res.writeHead(201, { "content-type": "application/json" }).end('{"id": "m1", "content": "tea"}');
  });
  try {
    // The facade's defaults: two 429s, then the create; one Idempotency-Key across the attempts.
    const strata = new Strata({ baseUrl: url, auth: { key: "strata_pk_test" } });
    assert.equal((await strata.memories.add("tea")).id, "m1");
    assert.equal(seen.length, 3);
    assert.ok(seen[0] && seen.every((key) => key === seen[0]));
    // The waits are the Retry-After seconds.
    retryAfter = "2";
    const waits = [];
    const response = await retryingFetch(fetch, 3, 60_000, async (ms) => { waits.push(ms); })(`${url}/v1/memories`,
      { method: "POST", body: "{}" });
    assert.equal(response.status, 201);
    assert.deepEqual(waits, [2000, 2000]);
    // Without retries the 429 is a StrataError that says when to call again.
    const once = new Strata({ baseUrl: url, auth: { key: "strata_pk_test" }, retries: 0 });
    await assert.rejects(once.memories.add("tea"), (err) => err instanceof StrataError && err.status === 429
      && err.code === "rate_limited" && err.retryAfter === 2 && err.requestId === "req_1");
  } finally { server.close(); }
});

test("an attempt slower than timeoutMs is aborted with a TimeoutError", async () => {
  const { server, url } = await serve((req, res) => {
    setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end("{}"), 2_000);
  });
  try {
    const strata = new Strata({ baseUrl: url, auth: { key: "strata_pk_test" }, timeoutMs: 200 });
    const started = Date.now();
    await assert.rejects(strata.memories.get("m1"), (err) => err.name === "TimeoutError");
    assert.ok(Date.now() - started < 1_500);
  } finally { server.closeAllConnections(); server.close(); }
});

// The client's retries against a local HTTP server that misbehaves as real ones do: a connection
// closed before any answer (a keep-alive socket the server dropped while it sat idle) is sent again
// only when that is safe, and a create carries one Idempotency-Key across its attempts.
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";

import { retryingFetch } from "../dist/index.js";

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

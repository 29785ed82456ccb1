// The generated client against a running stack: STRATA_API_URL, and STRATA_TOKEN, an ID token of a
// user who owns nothing yet (tests/e2e/test_js_client.py starts these with the session's stack).
// Expectations come from the API's contract (docs/api.md), not from the client.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Strata, StrataError, allMemories, createStrataClient, paginate, unwrap } from "../dist/index.js";

const baseUrl = process.env.STRATA_API_URL;
const token = process.env.STRATA_TOKEN;
if (!baseUrl || !token) throw new Error("set STRATA_API_URL and STRATA_TOKEN (see tests/e2e/test_js_client.py)");
const timeoutMs = Number(process.env.STRATA_CLIENT_TIMEOUT_S || 120) * 1000;

// A Firebase User stand-in: the client asks it for an ID token per request, as it would the SDK's.
let tokenRequests = 0;
const user = { getIdToken: async () => { tokenRequests += 1; return token; } };
const client = createStrataClient({ baseUrl, auth: { user } });
const strata = new Strata({ baseUrl, auth: { user }, timeoutMs: timeoutMs });

async function waitFor(what, probe) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

const FACTS = ["I keep three beehives behind the barn", "My sister Ines lives in Porto",
  "I play the cello on Sundays", "I am learning Portuguese", "I cycle to the office"];
const created = [];

test("create one memory and a batch; the credential comes from the user", async () => {
  const one = await unwrap(client.POST("/v1/memories", { body: { content: FACTS[0], category: "interesting" } }));
  assert.equal(one.content, FACTS[0]);
  assert.equal(one.layer, "short_term");
  assert.equal(one.visibility, "private");
  const batch = await unwrap(client.POST("/v1/memories/batch",
    { body: { memories: FACTS.slice(1).map((content) => ({ content })) } }));
  assert.deepEqual(batch.memories.map((m) => m.content), FACTS.slice(1));
  created.push(one, ...batch.memories);
  assert.ok(tokenRequests >= 2);
});

test("list with paging walks every memory once", async () => {
  const first = await unwrap(client.GET("/v1/memories", { params: { query: { limit: 2 } } }));
  assert.equal(first.memories.length, 2);
  assert.ok(first.next_cursor);
  const walked = [];
  for await (const memory of allMemories(client, { limit: 2 })) walked.push(memory.id);
  assert.deepEqual(new Set(walked), new Set(created.map((m) => m.id)));
  assert.equal(walked.length, created.length);
});

test("search finds a memory once it is projected, and pages with a cursor", async () => {
  const hits = await waitFor("a keyword hit for beehives", async () => {
    const page = await unwrap(client.GET("/v1/memories/search", { params: { query: { q: "beehives" } } }));
    return page.memories.some((m) => m.id === created[0].id) ? page : null;
  });
  assert.ok(hits.memories[0].score > 0);
  // Every projected memory matches one of these words; one per page, the walk ends at the last.
  const words = "beehives sister cello portuguese cycle";
  await waitFor("every memory searchable", async () => {
    const page = await unwrap(client.GET("/v1/memories/search", { params: { query: { q: words, limit: 10 } } }));
    return page.memories.length === FACTS.length;
  });
  const paged = [];
  for await (const hit of paginate(
    (cursor) => client.GET("/v1/memories/search", { params: { query: { q: words, limit: 1, cursor } } }),
    (page) => page.memories)) paged.push(hit.id);
  assert.deepEqual(new Set(paged), new Set(created.map((m) => m.id)));
  assert.equal(paged.length, FACTS.length);
});

test("edit content, visibility, category and the review flag with one JSON body", async () => {
  const id = created[1].id;
  const edited = await unwrap(client.PATCH("/v1/memories/{memory_id}", {
    params: { path: { memory_id: id } },
    body: { content: "My sister Ines lives in Lisbon", visibility: "public", category: "system", reviewed: true },
  }));
  assert.equal(edited.content, "My sister Ines lives in Lisbon");
  assert.equal(edited.visibility, "public");
  assert.equal(edited.category, "system");
  assert.equal(edited.reviewed, true);
  assert.equal(edited.user_review, true);
  assert.equal(edited.edited, true);
  const read = await unwrap(client.GET("/v1/memories/{memory_id}", { params: { path: { memory_id: id } } }));
  assert.equal(read.content, "My sister Ines lives in Lisbon");
});

test("delete a memory: it is gone, a second delete is a 404", async () => {
  const id = created[2].id;
  const deleted = await unwrap(client.DELETE("/v1/memories/{memory_id}", { params: { path: { memory_id: id } } }));
  assert.ok(deleted.deleted.includes(id));
  await assert.rejects(unwrap(client.GET("/v1/memories/{memory_id}", { params: { path: { memory_id: id } } })),
    (err) => err instanceof StrataError && err.status === 404);
  await assert.rejects(unwrap(client.DELETE("/v1/memories/{memory_id}", { params: { path: { memory_id: id } } })),
    (err) => err instanceof StrataError && err.status === 404);
});

test("a conversation's capture status reaches captured", async () => {
  const conversationId = `js-${Date.now().toString(36)}`;
  const made = await unwrap(client.POST("/v1/conversations", { body: {
    id: conversationId,
    transcript_segments: [
      { id: "s0", text: "Where do you work these days?", speaker: "SPEAKER_01", is_user: false },
      { id: "s1", text: "I work as a nurse at the city hospital.", speaker: "SPEAKER_00", is_user: true },
    ],
  } }));
  assert.deepEqual(made, { id: conversationId, status: "completed" });
  const status = await waitFor("the capture", async () => {
    const answer = await unwrap(client.GET("/v1/conversations/{conversation_id}",
      { params: { path: { conversation_id: conversationId } } }));
    return answer.state === "pending" ? null : answer;
  });
  assert.equal(status.conversation_id, conversationId);
  assert.ok(["captured", "fell_back"].includes(status.state), status.state);
  assert.ok(status.memory_count >= 1);
});

test("an error carries its request id, in the body and the header", async () => {
  const { error, response } = await client.GET("/v1/memories/{memory_id}",
    { params: { path: { memory_id: "no-such-memory" } } });
  assert.equal(response.status, 404);
  assert.match(error.error.request_id, /^req_[0-9a-f]+$/);
  assert.equal(response.headers.get("x-request-id"), error.error.request_id);
  await assert.rejects(unwrap(client.GET("/v1/memories", { params: { query: { limit: 0 } } })), (err) => {
    assert.ok(err instanceof StrataError);
    assert.equal(err.status, 400);
    assert.equal(err.code, "validation_error");
    assert.match(err.requestId, /^req_/);
    return true;
  });
  const anonymous = createStrataClient({ baseUrl, auth: { token: "not-a-token" } });
  await assert.rejects(unwrap(anonymous.GET("/v1/memories")), (err) => err.status === 401 && /^req_/.test(err.requestId));
});

test("the facade: a search walked by its cursor, a restore of a current fact, the review queue", async () => {
  const words = "beehives cello portuguese cycle";
  await waitFor("hybrid hits", async () => (await strata.memories.search(words, { limit: 10 })).memories.length >= 2);
  const first = await strata.memories.search(words, { limit: 1 });
  assert.equal(first.memories.length, 1);
  assert.ok(first.next_cursor);
  const second = await strata.memories.search(words, { limit: 1, cursor: first.next_cursor });
  assert.equal(second.memories.length, 1);
  assert.notEqual(second.memories[0].id, first.memories[0].id);
  const keyword = await strata.memories.search("beehives", { kind: "keyword" });
  assert.deepEqual(keyword.memories.map((m) => m.id), [created[0].id]);
  await assert.rejects(strata.memories.restore(created[0].id),
    (err) => err instanceof StrataError && err.status === 409 && err.code === "not_ended");
  assert.deepEqual((await strata.review.list({ limit: 5 })).reviews, []);
  const walked = [];
  for await (const m of strata.memories.all({ limit: 2 })) walked.push(m.id);
  assert.deepEqual(new Set(walked), new Set((await strata.memories.list({ limit: 100 })).memories.map((m) => m.id)));
});

test("the facade: a chat becomes a conversation whose capture completes", async () => {
  assert.throws(() => strata.conversations.add({ messages: [{ role: "user" }] }), TypeError);
  const id = `js-chat-${Date.now().toString(36)}`;
  const made = await strata.conversations.add({ id, messages: [
    { role: "assistant", content: "What do you do on weekends?" },
    { role: "user", content: "I go sailing on the lake every Saturday." },
  ] });
  assert.deepEqual(made, { id, status: "completed" });
  const status = await waitFor("the chat's capture", async () => {
    const answer = await strata.conversations.get(id);
    return answer.state === "pending" ? null : answer;
  });
  assert.ok(["captured", "fell_back"].includes(status.state), status.state);
  assert.ok(status.memory_count >= 1);
});

// A small app on the Firebase JS SDK, the way a real client uses Strata:
//   1. sign a test user up (and in) on the Auth emulator,
//   2. write a completed conversation to users/{uid}/conversations/{id} through the security rules,
//   3. wait for its memories through Strata's HTTP API with the generated client (clients/js; the
//      signed-in user is its credential), search them, edit one,
//   4. check the rules refuse another user's conversation and every backend collection,
//   5. delete the conversation and wait until its memories are gone (the delete cascade).
//
// Environment (what `strata stack up --suite firebase` prints): FIREBASE_AUTH_EMULATOR_HOST,
// FIRESTORE_EMULATOR_HOST, STRATA_PROJECT_ID, STRATA_API_URL. Prints one JSON line; exits non-zero
// on the first failed check. Module resolution: run with NODE_PATH=tools/firebase/node_modules, after
// building the client (make client-js).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";

import { StrataError, createStrataClient, unwrap } from "../../clients/js/dist/index.js";

const require = createRequire(import.meta.url);
const { initializeApp } = require("firebase/app");
const { getAuth, connectAuthEmulator, createUserWithEmailAndPassword } = require("firebase/auth");
const { getFirestore, connectFirestoreEmulator, doc, setDoc, getDoc, deleteDoc, terminate } =
  require("firebase/firestore");

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (start the suite: strata stack up --suite firebase)`);
  return value;
};
const projectId = env("STRATA_PROJECT_ID");
const apiUrl = env("STRATA_API_URL").replace(/\/$/, "");
const [fsHost, fsPort] = env("FIRESTORE_EMULATOR_HOST").split(":");
const authHost = env("FIREBASE_AUTH_EMULATOR_HOST");
const timeoutMs = Number(process.env.STRATA_EXAMPLE_TIMEOUT_S || 180) * 1000;

function check(ok, message) {
  if (!ok) throw new Error(`check failed: ${message}`);
}

async function waitFor(what, probe) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function refused(label, write) {
  try {
    await write();
  } catch (err) {
    check(err.code === "permission-denied", `${label}: expected permission-denied, got ${err.code || err}`);
    return label;
  }
  throw new Error(`check failed: the rules allowed ${label}`);
}

const app = initializeApp({ projectId, apiKey: "demo-api-key", authDomain: `${projectId}.firebaseapp.com` });
const auth = getAuth(app);
connectAuthEmulator(auth, `http://${authHost}`, { disableWarnings: true });
const db = getFirestore(app);
connectFirestoreEmulator(db, fsHost, Number(fsPort));

const email = `web-${randomUUID().slice(0, 8)}@example.test`;
const { user } = await createUserWithEmailAndPassword(auth, email, "Tulip-2291");
const uid = user.uid;
const strata = createStrataClient({ baseUrl: apiUrl, auth: { user } });

// 2. The conversation, written by the signed-in user through the rules.
const conversationId = `web-${randomUUID().slice(0, 12)}`;
const conversation = JSON.parse(readFileSync(new URL("./conversation.json", import.meta.url), "utf8"));
const now = new Date();
await setDoc(doc(db, "users", uid, "conversations", conversationId),
  { ...conversation, created_at: now, started_at: now, finished_at: now });
check((await getDoc(doc(db, "users", uid, "conversations", conversationId))).exists(), "own conversation readable");

// 3. Its memories, through the API.
const mine = async () => {
  const page = await unwrap(strata.GET("/v1/memories", { params: { query: { limit: 100 } } }));
  return page.memories.filter((m) => m.conversation_id === conversationId);
};
const memories = await waitFor("the conversation's memories", async () => {
  const found = await mine();
  return found.length > 0 ? found : null;
});
check(memories.some((m) => /nurse/i.test(m.content)), "a memory about Tom's work");
// Health facts (the peanut allergy) are restricted: listed for their owner, never indexed for search.
const hits = await waitFor("a keyword search hit", async () => {
  const page = await unwrap(strata.GET("/v1/memories/search", { params: { query: { q: "nurse", limit: 5 } } }));
  const found = page.memories.filter((m) => m.conversation_id === conversationId);
  return found.length > 0 ? found : null;
});

// An edit through the API, and a refusal that names its request id.
const edited = await unwrap(strata.PATCH("/v1/memories/{memory_id}",
  { params: { path: { memory_id: memories[0].id } }, body: { reviewed: true } }));
check(edited.user_review === true, "the review flag was set");
let requestId = null;
try {
  await unwrap(strata.GET("/v1/memories/{memory_id}", { params: { path: { memory_id: "no-such-memory" } } }));
} catch (err) {
  check(err instanceof StrataError && err.status === 404, `expected a 404, got ${err}`);
  requestId = err.requestId;
}
check(/^req_/.test(requestId || ""), "the refusal carries its request id");

// 4. What the rules refuse.
const blocked = [
  await refused("another user's conversation", () =>
    setDoc(doc(db, "users", `other-${uid}`, "conversations", conversationId), conversation)),
  await refused("users/{uid}/memory_items", () =>
    setDoc(doc(db, "users", uid, "memory_items", "forged"), { content: "forged", layer: "long_term" })),
  await refused("users/{uid}/memory_outbox", () =>
    setDoc(doc(db, "users", uid, "memory_outbox", "forged"), { kind: "upsert" })),
  await refused("memory_controls/global", () =>
    setDoc(doc(db, "memory_controls", "global"), { writes_disabled: true })),
  await refused("reading users/{uid}/memory_items", () =>
    getDoc(doc(db, "users", uid, "memory_items", memories[0].id))),
];

// 5. Delete the conversation: the cascade removes its memories.
await deleteDoc(doc(db, "users", uid, "conversations", conversationId));
await waitFor("the memories to be deleted", async () => (await mine()).length === 0);

await terminate(db);
console.log(JSON.stringify({
  ok: true, uid, conversation_id: conversationId, memories: memories.map((m) => m.content),
  search_hits: hits.length, refused: blocked, reviewed: edited.reviewed, error_request_id: requestId,
}));
process.exit(0);

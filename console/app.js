// The memory console: a person's memories by layer with their sources, the review queue, history
// and restore, deletes with their receipts, conversations, export and personal API keys. It talks
// to Strata only through the public API (the TypeScript client, `strata-memory-client`) and signs
// in with Firebase Auth; nothing here reads Firestore.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth, onAuthStateChanged,
  signInWithEmailAndPassword, signOut } from "firebase/auth";
import { Strata, StrataError, unwrap } from "strata-memory-client";
import { defaults } from "./config.js";

const params = new URLSearchParams(location.search);
const config = { api: params.get("api") || defaults.api || location.origin, auth: params.get("auth") || defaults.auth,
  firebase: { ...defaults.firebase, projectId: params.get("project") || defaults.firebase.projectId } };
const auth = getAuth(initializeApp(config.firebase));
if (config.auth) connectAuthEmulator(auth, `http://${config.auth}`, { disableWarnings: true });

const $ = (id) => document.getElementById(id);
const LAYERS = [["short_term", "Short-term", "waiting for a decision"], ["long_term", "Long-term", "admitted"],
  ["archive", "Archive", "kept, out of the default view"]];
let strata = null;
let uid = "";

/** An element with attributes (on* are listeners) and children (strings become text, never HTML). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v !== false && v != null) el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...children.flat().filter((c) => c != null && c !== false));
  return el;
}
const day = (iso) => (iso ? iso.slice(0, 10) : "");
const button = (label, onclick, extra = {}) => h("button", { type: "button", onclick, ...extra }, label);

function say(message, error = false) {
  $("status").textContent = message;
  $("status").className = error ? "error" : "";
}

/** Runs an action, saying what it did or why it failed (with the API's request id). */
async function run(doing, action) {
  say(`${doing}…`);
  try {
    const done = await action();
    if (done !== undefined) say(typeof done === "string" ? done : `${doing}: done.`); // else: the next action speaks
  } catch (err) {
    const detail = err instanceof StrataError ? `${err.message} (${err.code}, request ${err.requestId})` : String(err);
    say(`${doing} failed: ${detail}`, true);
  }
}

// ------------------------------------------------------------------------------------------ memories

function quotes(memory) {
  return memory.evidence.flatMap((e) => e.quote_refs.filter((q) => q.quote).map((q) => ({ quote: q.quote, source: e.source_id })));
}

function memoryCard(m) {
  const ended = Boolean(m.valid_to);
  const cited = quotes(m);
  const conversation = m.conversation_id || cited[0]?.source;
  return h("li", { class: ended ? "card ended" : "card", "data-memory-id": m.id },
    h("p", { class: "content" }, m.content),
    h("p", { class: "meta" }, [m.category, m.created_at && `added ${day(m.created_at)}`,
      m.valid_from && `true from ${day(m.valid_from)}`, ended && `ended ${day(m.valid_to)}`,
      m.subject_attribution !== "user" && `about ${m.subject_attribution}`].filter(Boolean).join(" · ")),
    ended ? h("p", { class: "badge" }, "Ended: a later statement replaced it") : null,
    cited.map((c) => h("blockquote", {}, `“${c.quote}”`)),
    conversation ? h("p", { class: "source" }, "From conversation ", h("a", { href: `#conversation-${conversation}` }, conversation)) : null,
    h("p", { class: "row" },
      button("History", () => run("Reading its history", () => showHistory(m.id)), { "aria-label": `History of: ${m.content}` }),
      ended ? button("Restore", () => run("Restoring", () => restore(m.id)), { "aria-label": `Restore: ${m.content}` }) : null,
      button("Delete", () => confirm(`Delete “${m.content}” and its whole lineage?`) &&
        run("Deleting the memory", () => deleteMemory(m)), { class: "danger", "aria-label": `Delete: ${m.content}` })));
}

async function loadMemories() {
  const form = new FormData($("search-form"));
  const q = String(form.get("q") || "").trim();
  const asOf = String(form.get("as_of") || "") || undefined;
  const memories = q
    ? (await strata.memories.search(q, { kind: String(form.get("kind")), limit: 50, as_of: asOf })).memories
    : (await strata.memories.list({ include_archive: true, limit: 200, as_of: asOf })).memories
      .sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)));
  $("layers").replaceChildren(...LAYERS.map(([layer, name, meaning]) => {
    const rows = memories.filter((m) => m.layer === layer);
    return h("section", { class: "layer", "aria-labelledby": `layer-${layer}` },
      h("h3", { id: `layer-${layer}` }, `${name} (${rows.length})`, h("small", {}, ` ${meaning}`)),
      rows.length ? h("ul", { class: "cards" }, rows.map(memoryCard)) : h("p", { class: "empty" }, "None."));
  }));
  await loadConversations(memories);
  return `${memories.length} memories${q ? ` for “${q}”` : ""}${asOf ? ` as of ${asOf}` : ""}.`;
}

async function showHistory(id) {
  const [memory, history] = await Promise.all([strata.memories.get(id),
    unwrap(strata.client.GET("/v1/memories/{memory_id}/history", { params: { path: { memory_id: id } } }))]);
  $("history-body").replaceChildren(
    h("p", { class: "content" }, memory.content),
    h("p", {}, `Valid from ${day(memory.valid_from) || "?"} to ${day(memory.valid_to) || "now"}`,
      memory.superseded_by ? ` (ended by ${memory.superseded_by})` : ""),
    memory.valid_to ? button("Restore", () => run("Restoring", () => restore(id)), { "aria-label": `Restore: ${memory.content}` }) : null,
    h("table", {}, h("caption", {}, "Ledger commits, oldest first"),
      h("thead", {}, h("tr", {}, ["#", "Change", "Status", "Layer", "When"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, history.commits.map((c) => h("tr", {}, [String(c.sequence), c.kind, c.status || "", c.layer || "",
        (c.created_at || "").replace("T", " ").slice(0, 19)].map((t) => h("td", {}, t)))))));
  $("history").hidden = false;
  $("history").focus();
  return `History of “${memory.content}”: ${history.commits.length} commits.`;
}

async function restore(id) {
  const memory = await strata.memories.restore(id);
  await loadMemories();
  if (!$("history").hidden) await showHistory(id);
  return `Restored: “${memory.content}” is current again.`;
}

// ----------------------------------------------------------------------------------- review queue

async function loadReview() {
  const { reviews } = await strata.review.list({ limit: 50 });
  const decide = (entry, decision, label) => button(label, () => run(`${label}`, async () => {
    await strata.review.resolve(entry.review_id, decision);
    await Promise.all([loadReview(), loadMemories()]);
    return `Review resolved (${label.toLowerCase()}): “${entry.content}”.`;
  }), { "aria-label": `${label}: ${entry.content}` });
  $("review-list").replaceChildren(...(reviews.length ? reviews.map((entry) => h("li", { class: "card review" },
    h("div", { class: "pair" },
      h("div", {}, h("h3", {}, "New"), h("p", { class: "content" }, entry.content)),
      entry.would_end.length
        ? h("div", {}, h("h3", {}, "Would end"), entry.would_end.map((f) => h("p", { class: "content" }, f.content)))
        : h("div", {}, h("h3", {}, entry.conflicting.length ? "Conflicts with" : "Would end"), entry.conflicting.length
          ? entry.conflicting.map((id) => h("p", { class: "meta" }, String(id))) : h("p", { class: "meta" }, "nothing"))),
    h("p", { class: "meta" }, `${entry.reason} · asked ${day(entry.created_at)} · decided for you ${day(entry.expires_at)}`),
    h("p", { class: "row" }, decide(entry, "accept", "Accept"), decide(entry, "keep_both", "Keep both"),
      decide(entry, "reject", "Reject")))) : [h("li", { class: "empty" }, "Nothing to review.")]));
}

// ------------------------------------------------------------------------------ deletes, receipts

const receiptsKey = () => `strata-console-receipts:${uid}`;
const receipts = () => JSON.parse(localStorage.getItem(receiptsKey()) || "[]");

async function remember(receiptId, what) {
  if (!receiptId) {
    await Promise.all([loadMemories(), loadReview()]);
    return `Deleted ${what}.`;
  }
  localStorage.setItem(receiptsKey(), JSON.stringify([{ id: receiptId, what, at: new Date().toISOString() }, ...receipts()]));
  renderReceipts();
  await readReceipt(receiptId, what);
  await Promise.all([loadMemories(), loadReview()]);
  return `Deleted ${what}. Receipt ${receiptId}.`;
}

async function deleteMemory(m) {
  const answer = await strata.memories.delete(m.id);
  return remember(answer.receipt_id, `memory “${m.content}”`);
}

function renderReceipts() {
  $("receipt-list").replaceChildren(...receipts().map((r) => h("li", {},
    `${r.what} (${r.at.replace("T", " ").slice(0, 16)}) `,
    button("Read receipt", () => run("Reading the receipt", () => readReceipt(r.id, r.what)), { "aria-label": `Read the receipt of ${r.what}` }))));
}

async function readReceipt(id, what) {
  const receipt = await unwrap(strata.client.GET("/v1/deletions/{receipt_id}", { params: { path: { receipt_id: id } } }));
  $("receipt").replaceChildren(h("article", { class: "card", "aria-labelledby": "receipt-h" },
    h("h3", { id: "receipt-h" }, `Receipt ${receipt.receipt_id}`),
    h("p", {}, `${what}: ${receipt.kind}, ${receipt.state}, ${receipt.memory_count} memories, ${day(receipt.created_at)}`),
    h("table", {}, h("caption", {}, "Where the removal was confirmed"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Store"), h("th", { scope: "col" }, "State"), h("th", { scope: "col" }, "Confirmed"))),
      h("tbody", {}, Object.entries(receipt.stores).map(([store, c]) => h("tr", {}, h("td", {}, store.replace("_", " ")),
        h("td", {}, c.state), h("td", {}, (c.confirmed_at || "").replace("T", " ").slice(0, 19))))))));
  return `Receipt ${id}: ${receipt.state}.`;
}

// -------------------------------------------------------------------------------- conversations

async function loadConversations(memories) {
  const ids = [...new Set(memories.flatMap((m) => [m.conversation_id, ...m.evidence.map((e) => e.source_id)]).filter(Boolean))];
  const known = (await Promise.all(ids.map((id) => strata.conversations.get(id).catch(() => null)))).filter(Boolean);
  $("conversation-rows").replaceChildren(...known.map(conversationRow));
}

/** One conversation: a failed or fallen-back capture (no memories to cite it) is found by its id. */
async function lookUp(id) {
  const c = await strata.conversations.get(id);
  document.getElementById(`conversation-${id}`)?.remove();
  $("conversation-rows").prepend(conversationRow(c));
  return `Conversation ${id}: ${c.state}${c.last_error_code ? ` (${c.last_error_code})` : ""}.`;
}

function conversationRow(c) {
  return h("tr", { id: `conversation-${c.conversation_id}` },
    h("td", {}, c.conversation_id), h("td", {}, c.state), h("td", {}, c.extractor ? `${c.extractor.id} ${c.extractor.version}` : ""), h("td", {}, String(c.memory_count ?? "")),
    h("td", {}, c.last_error_code || ""),
    h("td", {}, button("Delete", () => confirm(`Delete conversation ${c.conversation_id} and the memories only it supports?`) &&
      run("Deleting the conversation", async () => {
        const answer = await strata.conversations.delete(c.conversation_id);
        return remember(answer.receipt_id, `conversation ${c.conversation_id}`);
      }), { class: "danger", "aria-label": `Delete conversation ${c.conversation_id}` })));
}

// ---------------------------------------------------------------------------- export and API keys

async function download() {
  const { data, error, response } = await strata.client.GET("/v1/memories/export", { parseAs: "blob" });
  if (!response.ok) throw new StrataError(response.status, error, response.headers);
  const link = h("a", { href: URL.createObjectURL(data), download: `strata-export-${day(new Date().toISOString())}.jsonl` });
  document.body.append(link);
  link.click();
  link.remove();
  return `Export downloaded (${data.size} bytes).`;
}

async function loadKeys() {
  const keys = await strata.keys.list();
  $("key-list").replaceChildren(...keys.map((k) => h("li", {}, `${k.name} (${k.scope}, created ${day(k.created_at)}${k.last_used_at ? `, last used ${day(k.last_used_at)}` : ""}) `,
    button("Revoke", () => run("Revoking the key", async () => {
      await strata.keys.revoke(k.id);
      await loadKeys();
      return `Key “${k.name}” revoked: its next call is refused.`;
    }), { class: "danger", "aria-label": `Revoke key ${k.name}` }))));
}

// ------------------------------------------------------------------------------------ wiring

$("signin-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run("Signing in", () => signInWithEmailAndPassword(auth, $("email").value, $("password").value).then(() => undefined));
});
$("signup").addEventListener("click", () => run("Creating the account",
  () => createUserWithEmailAndPassword(auth, $("email").value, $("password").value).then(() => undefined)));
$("sign-out").addEventListener("click", () => signOut(auth));
$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run("Reading memories", loadMemories);
});
$("conversation-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run("Looking up the conversation", () => lookUp($("conversation-id").value.trim()));
});
$("export").addEventListener("click", () => run("Exporting", download));
$("delete-all").addEventListener("click", () => confirm("Delete every memory? This cannot be undone.") &&
  run("Deleting every memory", async () => remember((await strata.memories.deleteAll()).receipt_id, "every memory")));
$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run("Creating the key", async () => {
    const key = await strata.keys.create($("key-name").value, { scope: $("key-scope").value });
    $("key-secret").replaceChildren(h("p", {}, `Key “${key.name}”: copy it now, it is shown this once.`),
      h("output", { class: "secret", "aria-label": "The new key's secret" }, key.secret));
    $("key-form").reset();
    await loadKeys();
    return `Key “${key.name}” created.`;
  });
});

onAuthStateChanged(auth, (user) => {
  $("signin").hidden = Boolean(user);
  $("app").hidden = !user;
  $("sign-out").hidden = !user;
  $("who").textContent = user ? `Signed in as ${user.email || user.uid}` : "";
  strata = user ? new Strata({ baseUrl: config.api, auth: { user } }) : null;
  uid = user ? user.uid : "";
  if (user) {
    renderReceipts();
    run("Loading", async () => {
      await Promise.all([loadMemories(), loadReview(), loadKeys()]);
      return "Ready.";
    });
  }
});

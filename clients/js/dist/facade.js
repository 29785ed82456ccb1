// `Strata`: the API by resource (memories, conversations, keys, review), each method one request
// through the typed client of client.ts (credential, timeout, retries of a 429 or 503), answering
// the body the API documents or throwing a StrataError. Arguments carry the API's own names.
import { createStrataClient, paginate, unwrap } from "./client.js";
const SEARCH_PATHS = {
    hybrid: "/v1/memories/hybrid-search",
    keyword: "/v1/memories/search",
    vector: "/v1/memories/vector-search",
    archive: "/v1/memories/archive/search",
};
// The generated body types list every field with a default as present; the API fills them in.
function body(value) {
    return value;
}
/** `/v1/memories`: add, list, get, search, update, delete, restore. */
export class Memories {
    client;
    constructor(client) {
        this.client = client;
    }
    /** `POST /v1/memories`: an explicit memory; it enters Short-term. */
    add(content, options = {}) {
        return unwrap(this.client.POST("/v1/memories", { body: body({ ...options, content }) }));
    }
    /** `POST /v1/memories/batch`: up to 100 memories, all checked before any is written. */
    async addMany(contents, options = {}) {
        const memories = contents.map((content) => body({ ...options, content }));
        return (await unwrap(this.client.POST("/v1/memories/batch", { body: { memories } }))).memories;
    }
    /** `GET /v1/memories`: one page, newest first; its `next_cursor` asks for the next. */
    list(options = {}) {
        return unwrap(this.client.GET("/v1/memories", { params: { query: options } }));
    }
    /** Every memory `list` pages through, walking its cursor. */
    all(options = {}) {
        return paginate((cursor) => this.client.GET("/v1/memories", { params: { query: { ...options, cursor } } }), (page) => page.memories);
    }
    /** `GET /v1/memories/{id}`. */
    get(memoryId) {
        return unwrap(this.client.GET("/v1/memories/{memory_id}", { params: { path: { memory_id: memoryId } } }));
    }
    /**
     * A page of ranked hits (`memories`, each with its `score`; `next_cursor`): `hybrid` (the default:
     * keyword and vector ranks fused), `keyword`, `vector` or `archive` (the Archive layer only).
     */
    search(query, options = {}) {
        const { kind = "hybrid", ...rest } = options;
        return unwrap(this.client.GET(SEARCH_PATHS[kind], { params: { query: { ...rest, q: query } } }));
    }
    /** `PATCH /v1/memories/{id}`: any of the fields, at least one (new content is a new revision). */
    update(memoryId, edit) {
        return unwrap(this.client.PATCH("/v1/memories/{memory_id}", { params: { path: { memory_id: memoryId } }, body: body(edit) }));
    }
    /** `DELETE /v1/memories/{id}`: the memory and its whole lineage; names the deletion receipt. */
    delete(memoryId) {
        return unwrap(this.client.DELETE("/v1/memories/{memory_id}", { params: { path: { memory_id: memoryId } } }));
    }
    /** `DELETE /v1/memories`: every memory of the user. */
    deleteAll() {
        return unwrap(this.client.DELETE("/v1/memories"));
    }
    /** `POST /v1/memories/{id}/restore`: a fact a later statement ended is current again (409 otherwise). */
    restore(memoryId) {
        return unwrap(this.client.POST("/v1/memories/{memory_id}/restore", { params: { path: { memory_id: memoryId } } }));
    }
}
/** `/v1/conversations`: a chat as a conversation, its capture status, its deletion. */
export class Conversations {
    client;
    constructor(client) {
        this.client = client;
    }
    /**
     * `POST /v1/conversations` from chat messages: each a transcript segment in order, the `user`
     * role's marked as the user's (`SPEAKER_00`), every other role a speaker of its own (`SPEAKER_01`,
     * … in order of appearance).
     */
    add(chat) {
        const speakers = new Map([["user", 0]]);
        const segments = chat.messages.map((message, n) => {
            if (typeof message?.role !== "string" || !message.role || typeof message.content !== "string") {
                throw new TypeError(`message ${n} needs a role and a content string`);
            }
            if (!speakers.has(message.role))
                speakers.set(message.role, speakers.size);
            const speaker = speakers.get(message.role) ?? 0;
            return body({ id: `m${n}`, text: message.content,
                speaker: `SPEAKER_${String(speaker).padStart(2, "0")}`, speaker_id: speaker, is_user: message.role === "user" });
        });
        const { messages: _messages, ...rest } = chat;
        return unwrap(this.client.POST("/v1/conversations", { body: body({ ...rest, transcript_segments: segments }) }));
    }
    /** `GET /v1/conversations/{id}`: its capture status (`state`: pending, captured, failed, fell_back). */
    get(conversationId) {
        return unwrap(this.client.GET("/v1/conversations/{conversation_id}", { params: { path: { conversation_id: conversationId } } }));
    }
    /** `DELETE /v1/conversations/{id}`: with `cascade` (the default), the memories only it supports too. */
    delete(conversationId, options = {}) {
        return unwrap(this.client.DELETE("/v1/conversations/{conversation_id}", { params: { path: { conversation_id: conversationId }, query: options } }));
    }
}
/** `/v1/keys`: personal API keys (managed with an ID token only; a key cannot manage keys). */
export class Keys {
    client;
    constructor(client) {
        this.client = client;
    }
    /** A new key; its `secret` (`strata_pk_…`) is in this answer only. */
    create(name, options = {}) {
        return unwrap(this.client.POST("/v1/keys", { body: body({ scope: "read", ...options, name }) }));
    }
    /** The caller's keys, never their secrets. */
    async list() {
        return (await unwrap(this.client.GET("/v1/keys"))).keys;
    }
    /** Revoke a key: its next call is a 401. */
    revoke(keyId) {
        return unwrap(this.client.DELETE("/v1/keys/{key_id}", { params: { path: { key_id: keyId } } }));
    }
}
/** `/v1/review-queue`: the open review entries and their resolution. */
export class Review {
    client;
    constructor(client) {
        this.client = client;
    }
    /** One page of open entries, newest first (`reviews`, `next_cursor`). */
    list(options = {}) {
        return unwrap(this.client.GET("/v1/review-queue", { params: { query: options } }));
    }
    /** `accept`, `keep_both`, `reject`, or `correct` with the `correction` text. */
    resolve(reviewId, decision, correction) {
        return unwrap(this.client.POST("/v1/review-queue/{review_id}/resolve", { params: { path: { review_id: reviewId } }, body: body({ decision, correction }) }));
    }
}
/**
 * The Strata API with one credential (`auth`: a signed-in user, a personal key, a token, or a
 * server key with the user it acts for, `{ serverKey, actingFor }`), a timeout per attempt (`timeoutMs`, default 30 s)
 * and retries of a 429 or 503 after its Retry-After (`retries`, `maxRetryWaitMs`). `client` is
 * the typed client underneath, for the routes the facade does not cover.
 */
export class Strata {
    client;
    memories;
    conversations;
    keys;
    review;
    constructor(options) {
        this.client = createStrataClient(options);
        this.memories = new Memories(this.client);
        this.conversations = new Conversations(this.client);
        this.keys = new Keys(this.client);
        this.review = new Review(this.client);
    }
}

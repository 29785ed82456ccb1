import { type Memory, type StrataClient, type StrataOptions } from "./client.js";
import type { components, operations } from "./schema.gen.js";
type Schemas = components["schemas"];
export type MemoryList = Schemas["MemoryList"];
export type MemoryDeleted = Schemas["MemoryDeleted"];
export type AllDeleted = Schemas["AllDeleted"];
export type SearchPage = Schemas["SearchPage"];
export type CaptureStatus = Schemas["CaptureStatus"];
export type ConversationCreated = Schemas["ConversationCreated"];
export type ConversationDeleted = Schemas["ConversationDeleted"];
export type Key = Schemas["Key"];
export type KeyCreated = Schemas["KeyCreated"];
export type KeyRevoked = Schemas["KeyRevoked"];
export type ReviewPage = Schemas["ReviewPage"];
export type ReviewResolved = Schemas["ReviewResolved"];
type Query<Operation extends keyof operations> = NonNullable<operations[Operation]["parameters"]["query"]>;
export type ListOptions = Query<"listMemories">;
export type SearchKind = "hybrid" | "keyword" | "vector" | "archive";
export type SearchOptions = Omit<Query<"hybridSearchMemories">, "q" | "query"> & {
    kind?: SearchKind;
};
export type MemoryEdit = Partial<Schemas["MemoryEdit"]>;
export type NewMemory = Partial<Omit<Schemas["MemoryCreate"], "content">>;
export type ReviewDecision = Schemas["ReviewResolve"]["decision"];
/** A chat message: the `user` role's are the user's words. */
export interface Message {
    role: string;
    content: string;
}
/** `/v1/memories`: add, list, get, search, update, delete, restore. */
export declare class Memories {
    private readonly client;
    constructor(client: StrataClient);
    /** `POST /v1/memories`: an explicit memory; it enters Short-term. */
    add(content: string, options?: NewMemory): Promise<Memory>;
    /** `POST /v1/memories/batch`: up to 100 memories, all checked before any is written. */
    addMany(contents: string[], options?: NewMemory): Promise<Memory[]>;
    /** `GET /v1/memories`: one page, newest first; its `next_cursor` asks for the next. */
    list(options?: ListOptions): Promise<MemoryList>;
    /** Every memory `list` pages through, walking its cursor. */
    all(options?: Omit<ListOptions, "cursor">): AsyncGenerator<Memory>;
    /** `GET /v1/memories/{id}`. */
    get(memoryId: string): Promise<Memory>;
    /**
     * A page of ranked hits (`memories`, each with its `score`; `next_cursor`): `hybrid` (the default:
     * keyword and vector ranks fused), `keyword`, `vector` or `archive` (the Archive layer only).
     */
    search(query: string, options?: SearchOptions): Promise<SearchPage>;
    /** `PATCH /v1/memories/{id}`: any of the fields, at least one (new content is a new revision). */
    update(memoryId: string, edit: MemoryEdit): Promise<Memory>;
    /** `DELETE /v1/memories/{id}`: the memory and its whole lineage; names the deletion receipt. */
    delete(memoryId: string): Promise<MemoryDeleted>;
    /** `DELETE /v1/memories`: every memory of the user. */
    deleteAll(): Promise<AllDeleted>;
    /** `POST /v1/memories/{id}/restore`: a fact a later statement ended is current again (409 otherwise). */
    restore(memoryId: string): Promise<Memory>;
}
/** `/v1/conversations`: a chat as a conversation, its capture status, its deletion. */
export declare class Conversations {
    private readonly client;
    constructor(client: StrataClient);
    /**
     * `POST /v1/conversations` from chat messages: each a transcript segment in order, the `user`
     * role's marked as the user's (`SPEAKER_00`), every other role a speaker of its own (`SPEAKER_01`,
     * … in order of appearance).
     */
    add(chat: {
        messages: Message[];
        id?: string;
        language?: string;
        source?: string;
    }): Promise<ConversationCreated>;
    /** `GET /v1/conversations/{id}`: its capture status (`state`: pending, captured, failed, fell_back). */
    get(conversationId: string): Promise<CaptureStatus>;
    /** `DELETE /v1/conversations/{id}`: with `cascade` (the default), the memories only it supports too. */
    delete(conversationId: string, options?: {
        cascade?: boolean;
    }): Promise<ConversationDeleted>;
}
/** `/v1/keys`: personal API keys (managed with an ID token only; a key cannot manage keys). */
export declare class Keys {
    private readonly client;
    constructor(client: StrataClient);
    /** A new key; its `secret` (`strata_pk_…`) is in this answer only. */
    create(name: string, options?: Partial<Omit<Schemas["KeyCreate"], "name">>): Promise<KeyCreated>;
    /** The caller's keys, never their secrets. */
    list(): Promise<Key[]>;
    /** Revoke a key: its next call is a 401. */
    revoke(keyId: string): Promise<KeyRevoked>;
}
/** `/v1/review-queue`: the open review entries and their resolution. */
export declare class Review {
    private readonly client;
    constructor(client: StrataClient);
    /** One page of open entries, newest first (`reviews`, `next_cursor`). */
    list(options?: Query<"listReviews">): Promise<ReviewPage>;
    /** `accept`, `keep_both`, `reject`, or `correct` with the `correction` text. */
    resolve(reviewId: string, decision: ReviewDecision, correction?: string): Promise<ReviewResolved>;
}
/**
 * The Strata API with one credential (`auth`: a signed-in user, a personal key, a token, or a
 * server key with the user it acts for, `{ serverKey, actingFor }`), a timeout per attempt (`timeoutMs`, default 30 s)
 * and retries of a 429 or 503 after its Retry-After (`retries`, `maxRetryWaitMs`). `client` is
 * the typed client underneath, for the routes the facade does not cover.
 */
export declare class Strata {
    readonly client: StrataClient;
    readonly memories: Memories;
    readonly conversations: Conversations;
    readonly keys: Keys;
    readonly review: Review;
    constructor(options: StrataOptions);
}
export {};

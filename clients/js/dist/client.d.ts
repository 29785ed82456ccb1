import { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.gen.js";
export type { components, operations, paths };
export type Memory = components["schemas"]["Memory"];
export type ErrorBody = components["schemas"]["Error"];
/** What the client needs of a Firebase Auth `User`: its ID token, refreshed by the SDK. */
export interface IdTokenSource {
    getIdToken(forceRefresh?: boolean): Promise<string>;
}
/**
 * The credential each request carries as `Authorization: Bearer …`:
 * - `user`: a signed-in Firebase `User` (every route); its ID token is asked for per request, so
 *   the SDK's hourly refresh is picked up;
 * - `key`: a personal API key `strata_pk_…` (/mcp and every /v1 route within the key's scope, but
 *   key management, webhooks, the export and the account wipe);
 * - `token`: a fixed bearer token, or a function that returns one;
 * - `serverKey`: an operator's server key `strata_sk_…` for an app's backend (the /v1 routes a
 *   personal key takes), acting for the user whose id `actingFor` gives, sent as `X-Strata-User`
 *   with every request. It acts for any user: a server's secret, never shipped in an app or a page.
 */
export type Credential = {
    user: IdTokenSource;
} | {
    key: string;
} | {
    token: string | (() => string | Promise<string>);
} | {
    serverKey: string;
    actingFor: string;
};
/** The header naming the user a server key acts for. */
export declare const USER_HEADER = "X-Strata-User";
export interface StrataOptions {
    /** The API's URL (the `api` function's URL; locally the `api` row of `strata stack up`). */
    baseUrl: string;
    auth: Credential;
    /** Sent with every request, e.g. `X-App-Platform` and `X-Device-Id-Hash`. */
    headers?: Record<string, string>;
    fetch?: typeof globalThis.fetch;
    /**
     * A 429 (over the user's rate limit) or 503 (transient) means the API did nothing: the request is
     * sent again after its `Retry-After`, at most `retries` times (default 3; 0: never), each wait at
     * most `maxRetryWaitMs` (default 60 s).
     */
    retries?: number;
    maxRetryWaitMs?: number;
    /**
     * Milliseconds each attempt of a request may take before it is aborted with a `TimeoutError`
     * (default 30 s; 0: none).
     */
    timeoutMs?: number;
}
/** `fetch` whose every call is aborted after `timeoutMs` (and still when the caller's signal is). */
export declare function timedFetch(inner: typeof globalThis.fetch, timeoutMs: number): typeof globalThis.fetch;
/** The milliseconds a 429 or 503 asks the caller to wait (`Retry-After` seconds; 1 s without one). */
export declare function retryAfterMs(response: Response, capMs: number): number;
/**
 * `fetch` that sends a request again when it is answered 429 or 503, after its `Retry-After`, or
 * when its connection was closed before any answer and the request can be repeated safely (an
 * idempotent method, or an Idempotency-Key), at most `retries` times; the last answer is returned
 * as it is.
 */
export declare function retryingFetch(inner: typeof globalThis.fetch, retries?: number, maxWaitMs?: number, sleep?: (ms: number) => Promise<void>): typeof globalThis.fetch;
/** A refused or failed request: the API's error code and message, and the request's id to report. */
export declare class StrataError extends Error {
    readonly status: number;
    readonly code: string;
    readonly requestId: string | null;
    readonly retryAfter: number | null;
    constructor(status: number, body: unknown, headers: Headers);
}
export type StrataClient = Client<paths>;
/** A typed client: `client.GET("/v1/memories", { params: { query: { limit: 20 } } })`. */
export declare function createStrataClient(options: StrataOptions): StrataClient;
type Answer<T> = {
    data?: T;
    error?: unknown;
    response: Response;
};
/** The answer's body, or a {@link StrataError} for a refusal (4xx) or a failure (5xx). */
export declare function unwrap<T>(call: Promise<Answer<T>>): Promise<T>;
/** An answer of a cursor-paged route: its items under one key and the next page's cursor. */
export interface CursorPage {
    next_cursor?: string | null;
}
/**
 * Every item of a cursor-paged route, page by page: `fetchPage(cursor)` asks for one page
 * (`undefined` for the first), `items(page)` picks its items; iteration ends when a page has no
 * `next_cursor`.
 */
export declare function paginate<Page extends CursorPage, Item>(fetchPage: (cursor: string | undefined) => Promise<Answer<Page>>, items: (page: Page) => Item[]): AsyncGenerator<Item, void, undefined>;
type ListQuery = NonNullable<operations["listMemories"]["parameters"]["query"]>;
/** Every memory `GET /v1/memories` lists, walking its cursor. */
export declare function allMemories(client: StrataClient, query?: Omit<ListQuery, "cursor">): AsyncGenerator<Memory>;

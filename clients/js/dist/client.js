// The Strata API client. Its types are generated from the API's OpenAPI document
// (`npm run build`: openapi-typescript writes src/schema.gen.ts) and its requests are made by
// openapi-fetch, typed by those paths. This file is the thin hand-written layer on top: the
// credential (a signed-in Firebase user, a personal API key or a fixed token), a timeout per
// attempt, retries of a 429 or 503 after its Retry-After, errors as exceptions that carry the
// request id, and iteration over cursor-paged answers. facade.ts (`Strata`) is the API by resource on
// top of it; index.ts, the package's face, exports both.
import createFetchClient from "openapi-fetch";
/** The header naming the user a server key acts for. */
export const USER_HEADER = "X-Strata-User";
/** `fetch` whose every call is aborted after `timeoutMs` (and still when the caller's signal is). */
export function timedFetch(inner, timeoutMs) {
    if (!(timeoutMs > 0))
        return inner;
    return (input, init) => {
        const request = new Request(input, init);
        return inner(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) });
    };
}
const RETRY_STATUSES = new Set([429, 503]);
/** The milliseconds a 429 or 503 asks the caller to wait (`Retry-After` seconds; 1 s without one). */
export function retryAfterMs(response, capMs) {
    const seconds = Number(response.headers.get("retry-after") ?? "1");
    return Math.min(Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000, capMs);
}
// The API's creates that honour an Idempotency-Key: the client gives each call one, so that sending
// it again (below) can never create twice.
const KEYED = /\/v1\/(memories(\/batch)?|conversations)$/;
const REPEATABLE_METHODS = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
function withKey(request) {
    if (request.method !== "POST" || request.headers.has("idempotency-key") || !KEYED.test(new URL(request.url).pathname)) {
        return request;
    }
    const headers = new Headers(request.headers);
    headers.set("Idempotency-Key", globalThis.crypto.randomUUID());
    return new Request(request, { headers });
}
/** A connection the server closed while it sat idle (reused after a wait): no answer came back. */
function closedWhileIdle(error) {
    const code = error?.cause?.code;
    return error instanceof TypeError && (code === "UND_ERR_SOCKET" || code === "ECONNRESET");
}
/**
 * `fetch` that sends a request again when it is answered 429 or 503, after its `Retry-After`, or
 * when its connection was closed before any answer and the request can be repeated safely (an
 * idempotent method, or an Idempotency-Key), at most `retries` times; the last answer is returned
 * as it is.
 */
export function retryingFetch(inner, retries = 3, maxWaitMs = 60_000, sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))) {
    return async (input, init) => {
        const request = withKey(new Request(input, init));
        const repeatable = REPEATABLE_METHODS.has(request.method) || request.headers.has("idempotency-key");
        for (let attempt = 0;; attempt += 1) {
            let response;
            try {
                // A Request's body can be read once: each attempt sends a copy.
                response = await inner(request.clone());
            }
            catch (error) {
                if (attempt >= retries || !repeatable || !closedWhileIdle(error))
                    throw error;
                continue;
            }
            if (attempt >= retries || !RETRY_STATUSES.has(response.status))
                return response;
            await response.body?.cancel();
            await sleep(retryAfterMs(response, maxWaitMs));
        }
    };
}
/** A refused or failed request: the API's error code and message, and the request's id to report. */
export class StrataError extends Error {
    status;
    code;
    requestId;
    retryAfter;
    constructor(status, body, headers) {
        const error = body?.error;
        const code = error?.code ?? "http_" + status;
        super(`${status} ${code}: ${error?.message ?? "request failed"}`);
        this.name = "StrataError";
        this.status = status;
        this.code = code;
        this.requestId = error?.request_id ?? headers.get("x-request-id");
        const retry = headers.get("retry-after");
        this.retryAfter = retry === null ? null : Number(retry);
    }
}
async function bearer(auth) {
    if ("user" in auth)
        return auth.user.getIdToken();
    if ("key" in auth)
        return auth.key;
    if ("serverKey" in auth)
        return auth.serverKey;
    return typeof auth.token === "function" ? auth.token() : auth.token;
}
function authMiddleware(auth) {
    return {
        async onRequest({ request }) {
            request.headers.set("Authorization", `Bearer ${await bearer(auth)}`);
            if ("serverKey" in auth)
                request.headers.set(USER_HEADER, auth.actingFor);
            return request;
        },
    };
}
/** A typed client: `client.GET("/v1/memories", { params: { query: { limit: 20 } } })`. */
export function createStrataClient(options) {
    const client = createFetchClient({
        baseUrl: options.baseUrl.replace(/\/$/, ""),
        headers: options.headers,
        fetch: retryingFetch(timedFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), options.timeoutMs ?? 30_000), options.retries ?? 3, options.maxRetryWaitMs ?? 60_000),
    });
    client.use(authMiddleware(options.auth));
    return client;
}
/** The answer's body, or a {@link StrataError} for a refusal (4xx) or a failure (5xx). */
export async function unwrap(call) {
    const { data, error, response } = await call;
    if (!response.ok)
        throw new StrataError(response.status, error, response.headers);
    return data;
}
/**
 * Every item of a cursor-paged route, page by page: `fetchPage(cursor)` asks for one page
 * (`undefined` for the first), `items(page)` picks its items; iteration ends when a page has no
 * `next_cursor`.
 */
export async function* paginate(fetchPage, items) {
    let cursor;
    for (;;) {
        const page = await unwrap(fetchPage(cursor));
        yield* items(page);
        if (!page.next_cursor)
            return;
        cursor = page.next_cursor;
    }
}
/** Every memory `GET /v1/memories` lists, walking its cursor. */
export function allMemories(client, query = {}) {
    return paginate((cursor) => client.GET("/v1/memories", { params: { query: { ...query, cursor } } }), (page) => page.memories);
}

// The Strata API client. Its types are generated from the API's OpenAPI document
// (`npm run build`: openapi-typescript writes src/schema.gen.ts) and its requests are made by
// openapi-fetch, typed by those paths. This file is the thin hand-written layer on top: the
// credential (a signed-in Firebase user, a personal API key or a fixed token), a timeout per
// attempt, retries of a 429 or 503 after its Retry-After, errors as exceptions that carry the
// request id, and iteration over cursor-paged answers. facade.ts (`Strata`) is the API by resource on
// top of it; index.ts, the package's face, exports both.
import createFetchClient, { type Client, type Middleware } from "openapi-fetch";

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
export type Credential =
  | { user: IdTokenSource }
  | { key: string }
  | { token: string | (() => string | Promise<string>) }
  | { serverKey: string; actingFor: string };

/** The header naming the user a server key acts for. */
export const USER_HEADER = "X-Strata-User";

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
export function timedFetch(inner: typeof globalThis.fetch, timeoutMs: number): typeof globalThis.fetch {
  if (!(timeoutMs > 0)) return inner;
  return (input, init) => {
    const request = new Request(input, init);
    return inner(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) });
  };
}

const RETRY_STATUSES = new Set([429, 503]);

/** The milliseconds a 429 or 503 asks the caller to wait (`Retry-After` seconds; 1 s without one). */
export function retryAfterMs(response: Response, capMs: number): number {
  const seconds = Number(response.headers.get("retry-after") ?? "1");
  return Math.min(Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000, capMs);
}

// The API's creates that honour an Idempotency-Key: the client gives each call one, so that sending
// it again (below) can never create twice.
const KEYED = /\/v1\/(memories(\/batch)?|conversations)$/;
const REPEATABLE_METHODS = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

function withKey(request: Request): Request {
  if (request.method !== "POST" || request.headers.has("idempotency-key") || !KEYED.test(new URL(request.url).pathname)) {
    return request;
  }
  const headers = new Headers(request.headers);
  headers.set("Idempotency-Key", globalThis.crypto.randomUUID());
  return new Request(request, { headers });
}

/** A connection the server closed while it sat idle (reused after a wait): no answer came back. */
function closedWhileIdle(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  return error instanceof TypeError && (code === "UND_ERR_SOCKET" || code === "ECONNRESET");
}

/**
 * `fetch` that sends a request again when it is answered 429 or 503, after its `Retry-After`, or
 * when its connection was closed before any answer and the request can be repeated safely (an
 * idempotent method, or an Idempotency-Key), at most `retries` times; the last answer is returned
 * as it is.
 */
export function retryingFetch(inner: typeof globalThis.fetch, retries = 3, maxWaitMs = 60_000,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): typeof globalThis.fetch {
  return async (input, init) => {
    const request = withKey(new Request(input, init));
    const repeatable = REPEATABLE_METHODS.has(request.method) || request.headers.has("idempotency-key");
    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      try {
        // A Request's body can be read once: each attempt sends a copy.
        response = await inner(request.clone());
      } catch (error) {
        if (attempt >= retries || !repeatable || !closedWhileIdle(error)) throw error;
        continue;
      }
      if (attempt >= retries || !RETRY_STATUSES.has(response.status)) return response;
      await response.body?.cancel();
      await sleep(retryAfterMs(response, maxWaitMs));
    }
  };
}

/** A refused or failed request: the API's error code and message, and the request's id to report. */
export class StrataError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly retryAfter: number | null;

  constructor(status: number, body: unknown, headers: Headers) {
    const error = (body as Partial<ErrorBody> | undefined)?.error;
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

async function bearer(auth: Credential): Promise<string> {
  if ("user" in auth) return auth.user.getIdToken();
  if ("key" in auth) return auth.key;
  if ("serverKey" in auth) return auth.serverKey;
  return typeof auth.token === "function" ? auth.token() : auth.token;
}

function authMiddleware(auth: Credential): Middleware {
  return {
    async onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${await bearer(auth)}`);
      if ("serverKey" in auth) request.headers.set(USER_HEADER, auth.actingFor);
      return request;
    },
  };
}

export type StrataClient = Client<paths>;

/** A typed client: `client.GET("/v1/memories", { params: { query: { limit: 20 } } })`. */
export function createStrataClient(options: StrataOptions): StrataClient {
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ""),
    headers: options.headers,
    fetch: retryingFetch(timedFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      options.timeoutMs ?? 30_000), options.retries ?? 3, options.maxRetryWaitMs ?? 60_000),
  });
  client.use(authMiddleware(options.auth));
  return client;
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The answer's body, or a {@link StrataError} for a refusal (4xx) or a failure (5xx). */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new StrataError(response.status, error, response.headers);
  return data as T;
}

/** An answer of a cursor-paged route: its items under one key and the next page's cursor. */
export interface CursorPage {
  next_cursor?: string | null;
}

/**
 * Every item of a cursor-paged route, page by page: `fetchPage(cursor)` asks for one page
 * (`undefined` for the first), `items(page)` picks its items; iteration ends when a page has no
 * `next_cursor`.
 */
export async function* paginate<Page extends CursorPage, Item>(
  fetchPage: (cursor: string | undefined) => Promise<Answer<Page>>,
  items: (page: Page) => Item[],
): AsyncGenerator<Item, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await unwrap(fetchPage(cursor));
    yield* items(page);
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
  }
}

type ListQuery = NonNullable<operations["listMemories"]["parameters"]["query"]>;

/** Every memory `GET /v1/memories` lists, walking its cursor. */
export function allMemories(client: StrataClient, query: Omit<ListQuery, "cursor"> = {}): AsyncGenerator<Memory> {
  return paginate(
    (cursor) => client.GET("/v1/memories", { params: { query: { ...query, cursor } } }),
    (page) => page.memories,
  );
}

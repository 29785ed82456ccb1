// The package's face: the client layer (client.ts: credential, timeout, retries, errors, paging)
// and the API by resource on top of it (facade.ts: `Strata`).
export * from "./client.js";
export * from "./facade.js";

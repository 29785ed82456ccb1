export * from "./client.js";
export * from "./facade.js";

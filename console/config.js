// Where the console finds the API and Firebase Auth. Deployed (firebase.json's hosting), the API is
// this site's own /v1 routes (a rewrite to the api function) and Auth is the project's; fill in the
// project's web app config. Locally the URL names the stack's parts (`make dev SUITE=firebase`
// prints it): ?api=<api url>&auth=<auth emulator host>&project=<project id>.
export const defaults = {
  api: "",
  auth: "",
  firebase: { apiKey: "local-emulator-key", authDomain: "localhost", projectId: "demo-strata" },
};

#!/bin/sh
# The console's modules that are build output elsewhere: the compiled TypeScript client
# (clients/js/dist, `make client-js`), its one dependency openapi-fetch, and the Firebase JS SDK's
# browser modules (tools/firebase, `make setup`). Copied, not bundled: index.html's import map names
# them. Run by `make client-js` and by the browser test; the copies are not committed.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/console/vendor"
mkdir -p "$out/strata"
cp "$root"/clients/js/dist/*.js "$out/strata/"
cp "$root/clients/js/node_modules/openapi-fetch/dist/index.mjs" "$out/openapi-fetch.mjs"
sdk="$root/tools/firebase/node_modules/firebase"
cp "$sdk/firebase-app.js" "$out/"
# The SDK's auth module imports the app module from its CDN address: point it at the copy beside it.
sed 's#https://www.gstatic.com/firebasejs/[0-9.]*/firebase-app.js#./firebase-app.js#g' "$sdk/firebase-auth.js" > "$out/firebase-auth.js"

"""``make demo``: the whole path on the embedded defaults, start to finish.

Starts the local stack, writes the sample conversations to Firestore as an app would (the emulator's
trigger runs extraction), adds one explicit memory over HTTP (Short-term pending → processed),
waits for the user's consolidation pass (the writes scheduled it: the outbox drain enqueued the
user's named Cloud Task, due one interval later; the demo's stack runs with a short interval,
``DEMO_TICK_SECONDS``, where a deployment waits ten minutes), runs the scheduler's safety-net walk
once as Cloud Scheduler would, waits for the outbox to drain into Typesense and the vector index,
prints the memories per layer and one keyword and one vector search, then stops everything it
started.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from core.domain import paths
from strata_dev.samples import samples_dir

REPO = Path(__file__).resolve().parents[2]
DEMO_TICK_SECONDS = 5  # the consolidation interval of the demo's stack (a deployment's is 600 s)


def sample_dir() -> Path:
    try:
        return samples_dir()
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None


def _wait(label: str, check: Any, timeout_s: float = 60.0, every: float = 0.25) -> Any:
    start = time.monotonic()
    while True:
        value = check()
        if value:
            print(f"  {label}: {time.monotonic() - start:.1f} s")
            return value
        if time.monotonic() - start > timeout_s:
            raise SystemExit(f"timed out waiting for {label}")
        time.sleep(every)


def run(info: dict[str, Any]) -> None:
    from core.api.auth import emulator_token
    from core.bootstrap import Context

    ctx = Context()
    uid = "demo-" + uuid.uuid4().hex[:8]
    api = info["api_url"]
    headers = {"Authorization": "Bearer " + emulator_token(uid, info["project_id"]),
               "X-Device-Id-Hash": "3f9a1c2b", "X-App-Platform": "ios"}
    http = httpx.Client(base_url=api, headers=headers, timeout=30.0)

    print(f"\n== user {uid}: writing {len(list(sample_dir().glob('*.json')))} sample conversations to Firestore")
    conversation_ids = []
    for path in sorted(sample_dir().glob("*.json")):
        doc = json.loads(path.read_text())
        conversation_id = doc.pop("id")
        conversation_ids.append(conversation_id)
        ctx.paths.doc(uid, paths.CONVERSATIONS, conversation_id).set(doc)
        print(f"  wrote {conversation_id}")

    def captured() -> bool:
        runs = [ctx.paths.doc(uid, paths.CAPTURE_RUNS, c).get() for c in conversation_ids]
        return all(r.exists for r in runs)

    _wait("trigger → extraction done for every conversation", captured)

    print("\n== explicit memory over HTTP (enters Short-term as pending, then processed)")
    created = http.post("/v3/memories", json={"content": "I prefer window seats on long flights"}).json()
    for commit in http.get(f"/v1/memories/{created['id']}/history").json()["commits"]:
        print(f"  commit {commit['sequence']:>3} {commit['kind']:<18} revision {commit['revision']}")
    item = ctx.paths.doc(uid, paths.MEMORY_ITEMS, created["id"]).get().to_dict()
    print(f"  stored: layer={item['layer']} processing_state={item['processing_state']}")

    print(f"\n== consolidation scheduled by the writes (outbox → the user's Cloud Task, due {DEMO_TICK_SECONDS} s "
          "later → per-user pass)")

    def settled() -> bool:
        return not any(s.to_dict().get("pending_route") for s in ctx.paths.col(uid, paths.MEMORY_ITEMS).stream())

    _wait("every pending Short-term item routed", settled, timeout_s=60.0 + 3 * DEMO_TICK_SECONDS)
    print("  safety-net walk (Cloud Scheduler's job):",
          httpx.post(info["consolidate_url"], json={"mode": "fanout"}, timeout=30).json())

    def drained() -> bool:
        return not list(ctx.paths.col(uid, paths.OUTBOX).limit(1).stream())

    _wait("outbox drained into Typesense, the vector index and the graph", drained, timeout_s=90)

    print("\n== memories per layer")
    listing = http.get("/v1/memories", params={"include_archive": "true", "limit": 200}).json()["memories"]
    for layer in ("short_term", "long_term", "archive"):
        rows = [m for m in listing if m["layer"] == layer]
        print(f"  {layer} ({len(rows)})")
        for m in rows:
            flags = []
            if m["restricted"]:
                flags.append("restricted")
            if m["subject_attribution"] != "user":
                flags.append(m["subject_attribution"])
            print(f"    - {m['content']}" + (f"  [{', '.join(flags)}]" if flags else ""))
    reviews = http.get("/v3/memories/review-queue").json()["reviews"]
    print(f"  review queue: {len(reviews)} open")

    for label, route, query in (("keyword", "/v1/memories/search", "Lisbon"),
                                ("vector", "/v1/memories/vector-search", "does the user eat meat")):
        hits = http.get(route, params={"q": query, "limit": 3}).json()["memories"]
        print(f"\n== {label} search {query!r}")
        for hit in hits:
            print(f"  {hit['score']:.3f}  {hit['content']}")
    graph = http.get("/v1/knowledge-graph", params={"limit": 50}).json()
    print(f"\n== knowledge graph: {len(graph['nodes'])} nodes, {len(graph['edges'])} edges")


def main() -> int:
    from strata_dev.localstack import stack

    state_dir = Path(tempfile.mkdtemp(prefix="strata-demo-"))
    print("== starting the local stack")
    started = time.monotonic()
    os.environ.setdefault("STRATA_TICK_SECONDS", str(DEMO_TICK_SECONDS))
    info = stack.up(state_dir)
    print(f"  up in {time.monotonic() - started:.1f} s (api {info['api_url']})")
    os.environ.update(stack.stack_env(info))
    try:
        run(info)
    finally:
        stack.down(state_dir)
        print("\n== stack stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())

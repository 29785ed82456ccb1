"""Merge Strata's security rules fragment into an app's own ``firestore.rules``.

In an existing Firebase project the rules are the app's: Strata never releases rules there. The
app runs ``strata rules merge --app firestore.rules --out firestore.rules`` and releases the result
with its own tooling (``firebase deploy --only firestore:rules``). The merge

* inserts ``infra/rules/strata.rules`` inside the app's ``match /databases/{database}/documents``
  block, between ``// BEGIN strata`` and ``// END strata`` (a second merge replaces that section,
  so merging again after a Strata upgrade is the update);
* refuses an app file under which Strata's internals would be open: Firestore grants access when
  *any* rule allows it, so a recursive wildcard (``{document=**}``) or a match on one of Strata's
  collections in the app's rules would reach Strata's memory items, ledger or outbox whatever
  Strata's fragment says. The error names the offending line.

Both follow the deployment's names (:class:`core.domain.paths.Layout`: ``--data-root`` and
``--conversations-path``, else ``STRATA_DATA_ROOT`` and ``STRATA_CONVERSATIONS_PATH``): the
fragment's match is the conversations' path, and the check guards Strata's collections under the
data root.

``infra/firestore.rules`` (the new-project mode's file, the one the emulators load) is the fragment
merged into :data:`EMPTY_APP`; tests/infra checks it is up to date (``strata rules merge --write-default``
rewrites it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core import config
from core.domain import paths
from core.errors import ConfigurationError

REPO_ROOT = Path(__file__).resolve().parent.parent
FRAGMENT = REPO_ROOT / "infra" / "rules" / "strata.rules"
DEFAULT_RULES = REPO_ROOT / "infra" / "firestore.rules"
FRAGMENT_MATCH = "match /users/{strataUid}/conversations/{strataConversationId} {"  # the fragment's, as written
BEGIN = "// BEGIN strata (inserted by `strata rules merge`; edit infra/rules/strata.rules, not this section)"
END = "// END strata"

# Collections (and documents) the backend writes; an app's rule matching any of them would open it.
STRATA_USER_COLLECTIONS = paths.USER_COLLECTIONS
STRATA_TOP_LEVEL = (*paths.TOP_LEVEL_COLLECTIONS, paths.API_KEY_LOOKUP, paths.DELETION_RECEIPTS,
                    paths.CONSOLIDATION_WALK, paths.SERVER_KEYS, paths.SERVER_KEY_LOOKUP)

EMPTY_APP = """rules_version = '2';

// The new-project mode's rules: Strata's fragment (infra/rules/strata.rules) merged into an app
// file with no rules of its own. Generated: `strata rules merge --write-default` rewrites it.
service cloud.firestore {
  match /databases/{database}/documents {
  }
}
"""

_DOCUMENTS = re.compile(r"match\s+/databases/\{[A-Za-z_][A-Za-z0-9_]*\}/documents\s*\{")
_MATCH = re.compile(r"match\s+(/[^\s{]*(?:\{[^}]*\}[^\s{]*)*)\s*\{")
_SECTION = re.compile(r"[ \t]*" + re.escape(BEGIN.split(" (")[0]) + r"[^\n]*\n.*?" + re.escape(END) + r"[^\n]*\n?",
                      re.S)


def _strip_comments(text: str) -> str:
    """``text`` with // and /* */ comments blanked (same length, so offsets and lines still hold)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _full_matches(code: str) -> list[tuple[int, str]]:
    """(offset, full path) of every match block, nested paths joined to their parents'."""
    out: list[tuple[int, str]] = []
    stack: list[tuple[int, str]] = []  # (brace depth inside the block, full path)
    depth, i = 0, 0
    while i < len(code):
        m = _MATCH.match(code, i) if code.startswith("match", i) and (i == 0 or not code[i - 1].isalnum()) else None
        if m:
            parent = stack[-1][1] if stack else ""
            full = parent.rstrip("/") + "/" + m.group(1).strip("/")
            depth += 1
            stack.append((depth, full))
            out.append((i, full))
            i = m.end()
            continue
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            if stack and stack[-1][0] == depth:
                stack.pop()
            depth -= 1
        i += 1
    return out


def _under(segments: list[str], template: str) -> bool:
    """Whether a match path's ``segments`` start with ``template``'s (``{uid}`` and the app's
    wildcards match any segment)."""
    want = template.split("/")
    return len(segments) >= len(want) and all(
        w == paths.UID or s.startswith("{") or w == s for w, s in zip(want, segments, strict=False))


def check_app_rules(app: str, layout: paths.Layout | None = None) -> None:
    """Refuse app rules under which Strata's collections would not stay closed: any match whose full
    path (nested matches joined) is a recursive wildcard, one of Strata's collections, or a wildcard
    where one of Strata's collection names can stand (``layout``: where they are; default the
    process's)."""
    layout = layout or paths.layout()
    root = layout.data_root.split("/")
    code = _strip_comments(_SECTION.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), app))
    for offset, full in _full_matches(code):
        path = re.sub(r"^/databases/\{[^}]*\}/documents", "", full)
        if path == full and full.startswith("/databases/"):
            continue
        where = f"line {_line(app, offset)}: match {path or '/'}"
        segments = [s for s in path.strip("/").split("/") if s]
        if not segments:
            continue
        if any("=**}" in s for s in segments):
            raise ConfigurationError(
                f"{where}: a recursive wildcard also matches Strata's collections (memory items, ledger, outbox), "
                "and any rule that allows access there opens them. Match your own collections by name instead.")
        first = segments[0]
        if first in STRATA_TOP_LEVEL or first.startswith("{"):
            raise ConfigurationError(f"{where}: reaches Strata's top-level collections "
                                     f"({', '.join(STRATA_TOP_LEVEL)}); match your own collections by name.")
        if len(segments) > len(root) and _under(segments, layout.data_root):
            below = segments[len(root)]
            if below.startswith("{"):
                raise ConfigurationError(f"{where}: a wildcard collection under {layout.data_root} reaches "
                                         "Strata's per-user collections; match your own collections by name instead.")
            if below in STRATA_USER_COLLECTIONS:
                raise ConfigurationError(f"{where}: {layout.data_root}/{below} is Strata's; remove this match.")
        if _under(segments, layout.conversations):
            raise ConfigurationError(f"{where}: {layout.conversations} is Strata's; remove this match "
                                     "(Strata's fragment guards conversations).")


def _indent(block: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in block.splitlines(keepends=True))


def fragment_for(layout: paths.Layout) -> str:
    """``infra/rules/strata.rules`` with its match on ``layout``'s conversations path."""
    text = FRAGMENT.read_text(encoding="utf-8")
    if FRAGMENT_MATCH not in text:
        raise ConfigurationError(f"{FRAGMENT} no longer opens with {FRAGMENT_MATCH!r}")
    return text.replace(FRAGMENT_MATCH, f"match /{layout.trigger_pattern('strataUid', 'strataConversationId')} {{")


def merge(app: str, fragment: str | None = None, layout: paths.Layout | None = None) -> str:
    """The app's rules with Strata's fragment in its documents block (replacing an earlier merge),
    for ``layout``'s names (default: the process's)."""
    layout = layout or paths.layout()
    fragment = fragment_for(layout) if fragment is None else fragment
    check_app_rules(app, layout)
    if "rules_version = '2'" not in app and 'rules_version = "2"' not in app:
        raise ConfigurationError("the app's rules must declare rules_version = '2' (Strata's fragment needs it)")
    app = _SECTION.sub("", app)
    code = _strip_comments(app)
    found = list(_DOCUMENTS.finditer(code))
    if len(found) != 1:
        raise ConfigurationError(f"expected one `match /databases/{{database}}/documents` block, found {len(found)}")
    start = found[0].end()
    line_start = app.rfind("\n", 0, found[0].start()) + 1
    indent = re.match(r"[ \t]*", app[line_start:]).group(0) + "  "  # type: ignore[union-attr]
    section = f"{indent}{BEGIN}\n{_indent(fragment.rstrip() + chr(10), indent)}{indent}{END}\n"
    newline = app.find("\n", start)
    insert_at = newline + 1 if newline != -1 and not app[start:newline].strip() else start
    head = app[:insert_at] if insert_at != start else app[:start] + "\n"
    return head + section + app[insert_at:]


def default_rules(layout: paths.Layout | None = None) -> str:
    """infra/firestore.rules as it should be: the fragment merged into :data:`EMPTY_APP` (with
    ``layout``: the new-project mode's rules for those names)."""
    return merge(EMPTY_APP, layout=layout or paths.Layout())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strata rules merge", description=__doc__.splitlines()[0])
    parser.add_argument("--app", type=Path, help="the app's firestore.rules")
    parser.add_argument("--out", type=Path, help="where to write the merged rules (default: print them)")
    parser.add_argument("--check", action="store_true", help="only check the app's rules; write nothing")
    parser.add_argument("--write-default", action="store_true", help="rewrite infra/firestore.rules")
    parser.add_argument("--json", action="store_true", help="what was done as one JSON object")
    parser.add_argument("--data-root", help="where Strata keeps a user's collections (default STRATA_DATA_ROOT)")
    parser.add_argument("--conversations-path", help="the conversations collection (default STRATA_CONVERSATIONS_PATH)")
    args = parser.parse_args(argv)

    def said(**result: Any) -> None:
        if args.json:
            print(json.dumps({key: str(value) for key, value in result.items()}))
        else:
            print(" ".join(str(value) for value in result.values()))

    try:
        settings = config.load(**{k: v for k, v in (("data_root", args.data_root),
                                                    ("conversations_path", args.conversations_path)) if v})
        layout = paths.Layout(settings.data_root, settings.conversations_path)
        if args.write_default:
            DEFAULT_RULES.write_text(default_rules(), encoding="utf-8")
            said(wrote=DEFAULT_RULES)
            return 0
        if not args.app:
            parser.error("--app is required")
        app = args.app.read_text(encoding="utf-8")
        if args.check:
            check_app_rules(app, layout)
            said(checked=args.app, result="Strata's collections stay closed under these rules")
            return 0
        merged = merge(app, layout=layout)
    except ConfigurationError as exc:
        print(f"rules merge refused: {exc}", file=sys.stderr)
        return 1
    if args.out:
        args.out.write_text(merged, encoding="utf-8")
        said(wrote=args.out)
    else:
        sys.stdout.write(merged)
    return 0


if __name__ == "__main__":
    sys.exit(main())

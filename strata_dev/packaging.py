"""Build each function's deployable source, reproducibly.

``python -m strata_dev.packaging --out build/functions`` writes, for every function in
:data:`FUNCTIONS`:

* ``<out>/<name>/`` — the tree Cloud Functions builds from: the function's ``main.py`` (and any
  other file beside it), the whole ``core`` package, ``requirements.txt``, and the bytecode of every
  module (``__pycache__/*.pyc``, see :func:`bytecode`);
* ``<out>/<name>.zip`` — the same tree as a deterministic zip (sorted entries, fixed timestamps
  and modes), so identical sources give identical bytes;
* ``<out>/manifest.json`` — each zip's sha256 and entry point.

Terraform (``infra/terraform/modules/function``) zips the tree and names the bucket object by its
hash, so a changed source redeploys and an unchanged one does not.

``requirements.txt`` is ``functions/requirements.lock``: the full dependency closure of the
``[project].dependencies`` of ``pyproject.toml`` (which are all pinned; an unpinned one is refused),
every package at one version with its sha256, as pip's resolver chose them for the functions'
runtime (CPython 3.11 on linux x86_64). Without it a transitive dependency released between two
deploys would make them build different functions from the same zip. ``make lock`` (``python -m
strata_dev.packaging --lock``) rewrites it; a build whose lock does not pin every direct dependency
at its pyproject version is refused as stale. The build also refuses an interpreter other than the
runtime's: the shipped bytecode carries the packager's cache tag, which another version ignores.

An embedder that needs an optional extra has its own build (:data:`EXTRAS`): ``--embedder minilm``
(``make package EMBEDDER=minilm``) writes ``build/functions-minilm/`` whose ``requirements.txt`` is
``functions/requirements-minilm.lock``, the base closure at the base lock's versions plus the
``minilm`` extra's closure (pip resolves the extra with the base lock as constraints, so the two
locks never disagree on a shared package). Terraform's ``embedder = "minilm"`` deploys that
directory. ``make lock`` rewrites both locks.

The bytecode is shipped so that a cold start reads compiled modules instead of compiling the
sources: nothing guarantees a deployed instance may write ``__pycache__`` beside its sources, and
an instance that cannot, or runs with ``PYTHONDONTWRITEBYTECODE``, compiles every module of
``core`` on every cold start (about 40 ms of CPU for the api function on a 2-core machine).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import PackagingError

REPO_ROOT = Path(__file__).resolve().parent.parent

# Function name (directory under functions/) -> entry point in its main.py.
FUNCTIONS: dict[str, str] = {
    "api": "api",
    "on_conversation_complete": "on_conversation_complete",
    "delete_cascade": "delete_cascade",
    "outbox_drain": "outbox_drain",
    "consolidate": "consolidate",
    "deliver_webhook": "deliver_webhook",
}

# Cloud Functions runtime (infra/terraform/variables.tf `python_runtime`; tests/infra checks they agree).
RUNTIME = "python311"
RUNTIME_VERSION = (3, 11)
LOCK = REPO_ROOT / "functions" / "requirements.lock"

# Embedders (STRATA_EMBEDDER, Terraform's `embedder`) whose code needs an optional extra of
# pyproject.toml: each gets its own lock and its own build directory. The others (vertex, openai,
# hashing) run on the base dependencies.
EMBEDDERS = ("vertex", "openai", "hashing", "minilm")
EXTRAS: dict[str, str] = {"minilm": "minilm"}

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry
_SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = {".pyc", ".pyo"}
_PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!-]+(\s*;.*)?$")


@dataclass(frozen=True)
class Package:
    name: str
    entry_point: str
    tree: Path
    zip_path: Path
    sha256: str


def lock_path(embedder: str | None = None, repo_root: Path = REPO_ROOT) -> Path:
    """The lock an embedder's build ships: ``requirements-<extra>.lock`` for one that needs an
    extra, else the base ``requirements.lock``."""
    if embedder is not None and embedder not in EMBEDDERS:
        raise PackagingError(f"unknown embedder {embedder!r} ({' | '.join(EMBEDDERS)})")
    extra = EXTRAS.get(embedder or "")
    return repo_root / "functions" / (f"requirements-{extra}.lock" if extra else "requirements.lock")


def default_out(embedder: str | None = None) -> Path:
    """Where ``make package`` writes an embedder's build (Terraform's default ``package_dir``)."""
    extra = EXTRAS.get(embedder or "")
    return Path(f"build/functions-{extra}" if extra else "build/functions")


def pinned_requirements(pyproject: Path = REPO_ROOT / "pyproject.toml", extra: str | None = None) -> list[str]:
    """``[project].dependencies`` (and the optional ``extra``'s), sorted case-insensitively; each
    must be pinned with ``==``."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    deps = [d.strip() for d in data.get("project", {}).get("dependencies", [])]
    if extra is not None:
        optional = data.get("project", {}).get("optional-dependencies", {})
        if extra not in optional:
            raise PackagingError(f"{pyproject.name} has no optional extra {extra!r}")
        deps += [d.strip() for d in optional[extra]]
    unpinned = [d for d in deps if not _PINNED.match(d)]
    if unpinned:
        raise PackagingError(f"unpinned dependencies in {pyproject.name}: {', '.join(unpinned)}")
    return sorted(deps, key=str.lower)


_LOCK_LINE = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[A-Za-z0-9._,-]+\])?==([A-Za-z0-9.+!-]+) --hash=sha256:([0-9a-f]{64})$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_runtime(version: tuple[int, int] | None = None) -> None:
    """Refuse to package on another Python than the functions' runtime."""
    got = version or (sys.version_info.major, sys.version_info.minor)
    if tuple(got) != RUNTIME_VERSION:
        raise PackagingError(f"packaging runs on Python {got[0]}.{got[1]} but the functions run on {RUNTIME} "
                             f"(Python {RUNTIME_VERSION[0]}.{RUNTIME_VERSION[1]}): the shipped bytecode would be "
                             "ignored and the lock resolved for another interpreter; use a 3.11 virtualenv")


def resolve_lock(pyproject: Path = REPO_ROOT / "pyproject.toml", extra: str | None = None,
                 base_lock: Path | None = None) -> str:
    """The lock file's text: pip's resolution of the pinned dependencies, with ``extra``'s when
    given (a dry run that installs nothing; it reads the package index), one ``name==version
    --hash=sha256:...`` line each. ``base_lock``: a lock whose versions constrain the resolution, so
    an extra's lock keeps every base package at the base lock's version."""
    check_runtime()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        reqs, report = Path(tmp) / "requirements.txt", Path(tmp) / "report.json"
        reqs.write_text("\n".join(pinned_requirements(pyproject, extra)) + "\n", encoding="utf-8")
        constraints: list[str] = []
        if base_lock is not None:
            # A constraint names no extras (pip refuses them): the version is what is held.
            pins = [re.sub(r"\[.*?\]", "", line.split(" --hash=")[0])
                    for line in locked_requirements(base_lock, pyproject)]
            (Path(tmp) / "constraints.txt").write_text("\n".join(pins) + "\n", encoding="utf-8")
            constraints = ["-c", str(Path(tmp) / "constraints.txt")]
        done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "--dry-run",
                               "--ignore-installed", "--quiet", "--report", str(report), "-r", str(reqs),
                               *constraints],
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise PackagingError(f"pip could not resolve the dependencies: {done.stderr.strip()[-2000:]}")
        installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    extras = requested_extras(installs)
    lines = []
    for item in installs:
        meta, info = item["metadata"], item.get("download_info", {})
        digest = info.get("archive_info", {}).get("hashes", {}).get("sha256")
        if not digest:
            raise PackagingError(f"pip reported no sha256 for {meta['name']} {meta['version']}")
        name = _canonical(meta["name"])
        wanted = f"[{','.join(sorted(extras[name]))}]" if extras.get(name) else ""
        lines.append(f"{name}{wanted}=={meta['version']} --hash=sha256:{digest}")
    what = "[project].dependencies" if extra is None else f"[project].dependencies and its `{extra}` extra"
    header = (f"# The functions' full dependency closure for {RUNTIME} (CPython "
              f"{RUNTIME_VERSION[0]}.{RUNTIME_VERSION[1]}, linux x86_64), resolved by pip from pyproject.toml's\n"
              f"# {what}. Generated by `make lock`; do not edit. Shipped as each function's\n"
              "# requirements.txt (pip then checks every hash).\n")
    if extra is not None:
        header += (f"# The base packages are at requirements.lock's versions; `make package EMBEDDER={extra}`\n"
                   f"# ships this file in build/functions-{extra}/.\n")
    return header + "\n".join(sorted(lines)) + "\n"


def requested_extras(installs: list[dict[str, Any]]) -> dict[str, set[str]]:
    """The extras the closure asks of each resolved package (``pinecone`` wants ``httpx[http2]``).

    The lock pins a package with them (``httpx[http2]==0.28.1``): a pip that meets ``httpx[http2]``
    as a dependency and only ``httpx==0.28.1`` in a ``--require-hashes`` file resolves the extra
    on its own and refuses it as unpinned once a newer release of the package exists. A
    requirement's marker is evaluated for each extra its requirer is installed with (none: the
    base dependencies)."""
    from packaging.requirements import InvalidRequirement, Requirement

    resolved = {_canonical(item["metadata"]["name"]): item for item in installs}
    extras: dict[str, set[str]] = {name: set(item.get("requested_extras") or []) for name, item in resolved.items()}
    changed = True
    while changed:
        changed = False
        for name, item in resolved.items():
            for line in item["metadata"].get("requires_dist") or []:
                try:
                    req = Requirement(line)
                except InvalidRequirement:
                    continue
                target = _canonical(req.name)
                if not req.extras or target not in resolved:
                    continue
                active = req.marker is None or any(req.marker.evaluate({"extra": e})
                                                   for e in (extras[name] or {""}))
                if active and not set(req.extras) <= extras[target]:
                    extras[target] |= set(req.extras)
                    changed = True
    return extras


def locked_requirements(lock: Path = LOCK, pyproject: Path = REPO_ROOT / "pyproject.toml",
                        extra: str | None = None) -> list[str]:
    """The lock's requirement lines, after checking it pins every direct dependency (with
    ``extra``'s) at its version."""
    if not lock.is_file():
        raise PackagingError(f"{lock.name} is missing: run `make lock`")
    lines = [line.strip() for line in lock.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    pinned: dict[str, str] = {}
    for line in lines:
        m = _LOCK_LINE.match(line)
        if not m:
            raise PackagingError(f"{lock.name}: not a pinned, hashed requirement: {line!r}")
        pinned[_canonical(m.group(1))] = m.group(2)
    stale = []
    for dep in pinned_requirements(pyproject, extra):
        name, version = re.split(r"==", re.sub(r"\[.*?\]|\s*;.*$", "", dep), maxsplit=1)
        if pinned.get(_canonical(name)) != version.strip():
            stale.append(f"{name}=={version.strip()} (lock: {pinned.get(_canonical(name), 'absent')})")
    if stale:
        raise PackagingError(f"{lock.name} is stale: {', '.join(stale)}; run `make lock`")
    return lines


def _files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.suffix in _SKIP_SUFFIXES:
            continue
        if path.is_file():
            yield path


def source_files(name: str, repo_root: Path = REPO_ROOT) -> dict[str, bytes]:
    """Archive name -> bytes for one function (without requirements.txt)."""
    fn_dir = repo_root / "functions" / name
    if not (fn_dir / "main.py").is_file():
        raise PackagingError(f"functions/{name}/main.py does not exist")
    out: dict[str, bytes] = {}
    for path in _files(fn_dir):
        out[path.relative_to(fn_dir).as_posix()] = path.read_bytes()
    core = repo_root / "core"
    for path in _files(core):
        out["core/" + path.relative_to(core).as_posix()] = path.read_bytes()
    return out


# Run in a fresh, isolated interpreter (-I -S: no site, no environment) with a fixed hash seed:
# marshal marks objects that are referenced more than once, so the bytes of a .pyc depend on the
# compiling process's state; a bare interpreter compiling the same files in the same order writes
# the same bytes every time.
_COMPILE = """
import base64, importlib.util, json, marshal, sys
out = {}
for name, source in sorted(json.load(sys.stdin).items()):
    data = base64.b64decode(source)
    code = compile(data, name, "exec", dont_inherit=True)
    header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") + importlib.util.source_hash(data)
    out[importlib.util.cache_from_source(name)] = base64.b64encode(header + marshal.dumps(code)).decode()
json.dump(out, sys.stdout)
"""


def bytecode(entries: dict[str, bytes]) -> dict[str, bytes]:
    """Archive name -> bytes of the ``__pycache__`` file of every ``.py`` entry, for the interpreter
    running the packager (its cache tag names the files; another Python version ignores them).

    Each is a checked-hash .pyc (PEP 552): it holds the hash of its source instead of a timestamp,
    so it is reproducible, survives the zip's fixed timestamps, and Python uses it only while the
    source beside it is byte-for-byte the one it was compiled from."""
    sources = {name: base64.b64encode(data).decode() for name, data in entries.items() if name.endswith(".py")}
    done = subprocess.run([sys.executable, "-I", "-S", "-c", _COMPILE], input=json.dumps(sources),
                          capture_output=True, text=True, timeout=300, env={"PYTHONHASHSEED": "0"})
    if done.returncode != 0:
        raise PackagingError(f"compiling the sources failed: {done.stderr.strip()[-2000:]}")
    return {name: base64.b64decode(data) for name, data in json.loads(done.stdout).items()}


def write_zip(entries: dict[str, bytes], zip_path: Path) -> str:
    """Write ``entries`` as a deterministic zip; return its sha256."""
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w") as zf:
        for arcname in sorted(entries):
            info = zipfile.ZipInfo(arcname, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so external_attr carries the mode on every host
            info.external_attr = (0o100644 & 0xFFFF) << 16
            zf.writestr(info, entries[arcname], compresslevel=9)
    return hashlib.sha256(zip_path.read_bytes()).hexdigest()


def write_tree(entries: dict[str, bytes], tree: Path) -> None:
    """Replace ``tree`` with exactly ``entries`` (no stale files from an earlier build)."""
    if tree.exists():
        shutil.rmtree(tree)
    for arcname, data in entries.items():
        target = tree / arcname
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o644)


def build(out: Path, names: Sequence[str] | None = None, repo_root: Path = REPO_ROOT,
          embedder: str | None = None) -> list[Package]:
    """Package ``names`` (default: every function) into ``out``, with the lock of ``embedder``
    (:func:`lock_path`; default: the base lock). Fails if any is missing."""
    selected = list(names) if names else list(FUNCTIONS)
    unknown = [n for n in selected if n not in FUNCTIONS]
    if unknown:
        raise PackagingError(f"unknown functions: {', '.join(unknown)}")
    missing = [n for n in selected if not (repo_root / "functions" / n / "main.py").is_file()]
    if missing:
        raise PackagingError("missing function sources: " + ", ".join(f"functions/{n}/main.py" for n in missing))
    check_runtime()
    lock = lock_path(embedder, repo_root)
    extra = EXTRAS.get(embedder or "")
    locked_requirements(lock, repo_root / "pyproject.toml", extra)
    if extra is not None:  # the extra's lock must carry the base closure at the base lock's versions
        base = set(locked_requirements(lock_path(None, repo_root), repo_root / "pyproject.toml"))
        lagging = sorted(base - set(locked_requirements(lock, repo_root / "pyproject.toml", extra)))
        if lagging:
            raise PackagingError(f"{lock.name} is stale against requirements.lock ({', '.join(lagging[:3])}"
                                 f"{' ...' if len(lagging) > 3 else ''}): run `make lock`")
    requirements = lock.read_bytes()
    out.mkdir(parents=True, exist_ok=True)
    packages: list[Package] = []
    for name in selected:
        entries = source_files(name, repo_root)
        entries.update(bytecode(entries))
        entries["requirements.txt"] = requirements
        tree, zip_path = out / name, out / f"{name}.zip"
        write_tree(entries, tree)
        digest = write_zip(entries, zip_path)
        packages.append(Package(name, FUNCTIONS[name], tree, zip_path, digest))
    manifest = {p.name: {"entry_point": p.entry_point, "zip": p.zip_path.name, "sha256": p.sha256,
                         "requirements": lock.name} for p in packages}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return packages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_dev.packaging", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="output directory (default: build/functions, build/functions-minilm for minilm)")
    parser.add_argument("--embedder", choices=EMBEDDERS, default=None,
                        help="the deployment's embedder: minilm ships requirements-minilm.lock (default: the base lock)")
    parser.add_argument("--lock", action="store_true",
                        help="rewrite functions/requirements.lock and each extra's lock (pip's resolver); "
                             "with --embedder, only that embedder's")
    parser.add_argument("names", nargs="*", help="functions to package (default: all)")
    args = parser.parse_args(argv)
    if args.lock:
        extras = [EXTRAS.get(args.embedder)] if args.embedder else [None, *sorted(set(EXTRAS.values()))]
        try:
            for extra in extras:
                path = lock_path(None) if extra is None else REPO_ROOT / "functions" / f"requirements-{extra}.lock"
                path.write_text(resolve_lock(extra=extra, base_lock=None if extra is None else LOCK), encoding="utf-8")
                print(f"wrote {path} ({len(locked_requirements(path, extra=extra))} packages)")
        except PackagingError as exc:
            print(f"lock failed: {exc}", file=sys.stderr)
            return 1
        return 0
    try:
        packages = build(args.out or default_out(args.embedder), args.names, embedder=args.embedder)
    except PackagingError as exc:
        print(f"packaging failed: {exc}", file=sys.stderr)
        return 1
    for p in packages:
        print(f"{p.zip_path}  sha256={p.sha256}  entry={p.entry_point}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

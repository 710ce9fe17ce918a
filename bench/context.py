"""What every section shares: the options of the run, the shared data, and the stores built once.

Loading Open English WordNet takes minutes, so the on-disk stores are built once per run under
``bench/out/stores/`` (by the ``load`` section when it runs, else on first use) and reused by
every later section: ``oewn`` (Open English WordNet alone) and ``lex`` (OEWN + the OMW lexicons
of the corpus languages + the UNESCO thesaurus). Sections copy a store before writing to it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import PY, ROOT, BenchError, run_child

KG = [str(Path(PY).parent / "kg-rag")]

# sizes per scale; "tiny" is for the smoke test on generated data
SCALES = ("tiny", "small", "medium", "full")


@dataclass(slots=True)
class Ctx:
    shared: Path
    out: Path
    scale: str = "small"
    repeat: int = 3
    reuse: bool = False          # reuse stores of an earlier run when their inputs are unchanged
    stores: dict[str, Path] = field(default_factory=dict)
    memo: dict[str, object] = field(default_factory=dict)   # results sections share (grow → retrieve)
    started: float = field(default_factory=time.perf_counter)

    # --- files ---------------------------------------------------------------------------
    def data(self, *parts: str) -> Path:
        return self.shared.joinpath(*parts)

    @property
    def oewn_file(self) -> Path:
        return self.data("wordnet", "english-wordnet-2025.xml.gz")

    def omw_files(self) -> list[Path]:
        return [p for p in (self.data("wordnet", f"omw-{c}-2.0.xml.gz") for c in ("he", "fr", "es"))
                if p.exists()]

    def thesaurus_files(self) -> list[Path]:
        return [p for p in (self.data("thesauri", "unesco-thesaurus.ttl"),) if p.exists()]

    def dir(self, *parts: str) -> Path:
        p = self.out.joinpath(*parts)
        p.mkdir(parents=True, exist_ok=True)
        return p

    def fresh(self, *parts: str) -> Path:
        """An empty folder under out/ (removed first if it exists)."""
        p = self.out.joinpath(*parts)
        if p.exists():
            shutil.rmtree(p)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def log(self, msg: str) -> None:
        el = time.perf_counter() - self.started
        print(f"[{el / 60:5.1f} min] {msg}", file=sys.stderr, flush=True)

    def pick(self, tiny: int, small: int, full: int) -> int:
        """The size of this scale; ``medium`` (a larger corpus for grow and retrieve only) takes
        the small sizes everywhere else."""
        return {"tiny": tiny, "small": small, "medium": small, "full": full}[self.scale]

    # --- stores ----------------------------------------------------------------------------
    def load_argv(self, store: Path, files: list[Path]) -> list[str]:
        """``kg-rag load``; the API (``KnowledgeGraph.load``) in a worker while the command is missing."""
        if "load-cli" not in self.memo:
            self.memo["load-cli"] = need_cli("load") is None
        if self.memo["load-cli"]:
            return [*KG, "--store", str(store), "load", *map(str, files)]
        return [PY, "-m", "bench.work_load", str(store), *map(str, files)]

    def _stamp(self, files: list[Path]) -> str:
        """What a shared store was built from: each input's path, size and SHA-256 (not its
        modification time, which a fresh copy of the same data changes: a rebuild of minutes)."""
        return json.dumps([[str(f), f.stat().st_size, _digest(f)] for f in files])

    def _reusable(self, store: Path, files: list[Path]) -> bool:
        stamp = store.with_suffix(".stamp")
        return self.reuse and store.exists() and stamp.exists() and stamp.read_text() == self._stamp(files)

    def register(self, name: str, store: Path, files: list[Path]) -> None:
        """Record a store built by a section (e.g. the last load of the ``load`` section)."""
        store.with_suffix(".stamp").write_text(self._stamp(files))
        self.stores[name] = store

    def store(self, name: str) -> Path:
        """The shared store ``oewn`` or ``lex``, built now if this run has not built it yet."""
        if name in self.stores:
            return self.stores[name]
        if name in ("oewn", "wn"):
            files = [self.oewn_file]
        elif name == "lex":
            files = [self.oewn_file, *self.omw_files(), *self.thesaurus_files()]
        else:
            raise BenchError(f"unknown shared store {name}")
        path = self.out / "stores" / name
        if self._reusable(path, files):
            self.log(f"reusing the store {path}")
            self.stores[name] = path
            return path
        if name == "wn":
            shutil.rmtree(path, ignore_errors=True)
            self.log("building the wn library's database of OEWN")
            run_child([PY, "-m", "bench.work_wn", "add", str(files[0]), str(path)])
        elif name == "lex":
            base = self.store("oewn")
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(base, path)
            self.log(f"building the store {name}: OEWN copied, loading {len(files) - 1} more files")
            rest = files[1:]
            if rest:
                run_child(self.load_argv(path, rest))
        else:
            shutil.rmtree(path, ignore_errors=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.log(f"building the store {name} from {len(files)} files (minutes)")
            run_child(self.load_argv(path, files))
        self.register(name, path, files)
        return path

    def demo_store(self) -> Path:
        """The demo store (bundled sample, documents indexed) built by ``kg-rag demo``."""
        if "demo" in self.stores:
            return self.stores["demo"]
        path = self.out / "stores" / "demo"
        shutil.rmtree(path, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        run_child([*KG, "--store", str(path), "demo", "--json"])
        self.stores["demo"] = path
        return path

    def copy_store(self, name: str, dest: Path) -> Path:
        src = self.demo_store() if name == "demo" else self.store(name)
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dest)
        return dest


def have(module: str) -> bool:
    """Whether a module of the project (or a peer library) can be imported."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def need_cli(command: str) -> str | None:
    """None when ``kg-rag COMMAND`` exists, else the reason it cannot be benchmarked yet."""
    r = subprocess.run([*KG, command, "--help"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    if r.returncode == 0:
        return None
    return f"`kg-rag {command}` does not exist yet"


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


__all__ = ["KG", "ROOT", "SCALES", "Ctx", "have", "need_cli"]

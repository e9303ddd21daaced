"""The package boundaries hold (docs/internals.md, "Packages"): each package is used through
its ``__init__`` only, no two packages import each other (even lazily, inside a function),
and each package's public names are the pinned list in ``tests/public_api.txt``, so that a
change of the API is a deliberate one.

After a deliberate change of some ``__all__``: ``python tests/test_boundaries.py --write``
rewrites the pinned list (review its diff).
"""

from __future__ import annotations

import ast
import importlib
import itertools
import re
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "dustless"
PINNED = Path(__file__).with_name("public_api.txt")
_DUSTLESS = re.compile(r"dustless\.([a-z_]+)(\.[a-z_0-9.]+)?")


def _package(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``dustless.…`` module ``path`` imports, at any depth (lazy imports too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


def _edges() -> dict[str, dict[str, list[str]]]:
    """package → package it imports → where (``file:line``)."""
    out: dict[str, dict[str, list[str]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        me = _package(path)
        for line, module in _imports(path):
            m = _DUSTLESS.fullmatch(module)
            if m is not None and m.group(1) != me:
                where = f"{path.relative_to(SRC.parent)}:{line}"
                out.setdefault(me, {}).setdefault(m.group(1), []).append(where)
    return out


def test_no_package_imports_another_ones_private_module() -> None:
    leaks = []
    for path in sorted(SRC.rglob("*.py")):
        me = _package(path)
        for line, module in _imports(path):
            m = _DUSTLESS.fullmatch(module)
            if m is None or m.group(1) == me or not m.group(2):
                continue
            if any(part.startswith("_") for part in m.group(2).split(".")[1:]):
                leaks.append(f"{path.relative_to(SRC.parent)}:{line}: {module}")
    assert leaks == [], "import the package, not its private module:\n" + "\n".join(leaks)


def _cycle(edges: dict[str, dict[str, list[str]]]) -> list[str] | None:
    """One cycle of the package graph, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, {})):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_package_cycle() -> None:
    edges = _edges()
    cycle = _cycle(edges)
    if cycle is not None:
        hops = [f"{a} → {b} ({edges[a][b][0]})" for a, b in itertools.pairwise(cycle)]
        raise AssertionError("packages import each other:\n" + "\n".join(hops))


def test_the_cycle_finder_finds_one() -> None:
    # The check above must be able to fail.
    assert _cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": []}, "b": {}}) is None


def _public_api() -> list[str]:
    lines = []
    for path in sorted(SRC.iterdir()):
        name = path.name.removesuffix(".py")
        if name.startswith("_") or not (path.suffix == ".py" or (path / "__init__.py").exists()):
            continue
        module = importlib.import_module(f"dustless.{name}")
        lines += [f"{name}: {n}" for n in sorted(getattr(module, "__all__", ()))]
    return lines


def test_public_names_are_the_pinned_ones() -> None:
    have, want = _public_api(), PINNED.read_text(encoding="utf-8").splitlines()
    added = sorted(set(have) - set(want))
    removed = sorted(set(want) - set(have))
    assert (added, removed) == ([], []), (
        f"public names changed: added {added}, removed {removed}; if deliberate, run "
        "`python tests/test_boundaries.py --write` and review the diff"
    )


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    PINNED.write_text("\n".join(_public_api()) + "\n", encoding="utf-8")

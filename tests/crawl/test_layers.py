"""crawl/ in two layers (issue 27): decisions that return, an engine that applies them.

Read from the source, as ``tests/test_boundaries.py`` reads imports: no object of the crawl
is given a collaborator after construction (``a.b = c`` where ``a`` is not ``self``), and the
deciding modules never call the admission — spellings and learning return orders
(``crawl/_orders.py``) that the engine hands it. The settings become parts in one place
(``crawl/_build.py``), and the config builds nothing itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

CRAWL = Path(__file__).resolve().parents[2] / "src" / "dustless" / "crawl"
# Collaborators wired among the crawl's parts: set by a constructor only.
_COLLABORATORS = {"admission", "spellings", "learning", "hosts", "store", "discovery"}


def _sets_on_others(tree: ast.AST) -> list[str]:
    """``x.y.collaborator = …`` or ``other.collaborator = …``: a reference set afterwards."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        # A flag (``stats.learning = True``) is a value, not a reference.
        if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Constant):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if (
                    isinstance(sub, ast.Attribute)
                    and sub.attr in _COLLABORATORS
                    and not (isinstance(sub.value, ast.Name) and sub.value.id == "self")
                ):
                    found.append(f"line {sub.lineno}: {ast.unparse(sub)}")
    return found


def test_no_collaborator_is_set_after_construction() -> None:
    bad = {
        p.name: hits
        for p in sorted(CRAWL.rglob("*.py"))
        if (hits := _sets_on_others(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert bad == {}


def test_spellings_and_learning_never_call_the_admission() -> None:
    for name in ("spellings.py", "learn.py", "_learn_held.py"):
        tree = ast.parse((CRAWL / name).read_text(encoding="utf-8"))
        used = {
            ast.unparse(n)
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr == "admission"
        }
        assert used == set(), name


def _takes_config(tree: ast.AST) -> list[str]:
    """Functions with a parameter annotated ``CrawlConfig`` (``self`` of its own methods aside)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if a.annotation is not None and "CrawlConfig" in ast.unparse(a.annotation):
                    found.append(f"{node.name}({a.arg})")
    return found


def test_the_settings_become_parts_in_one_place() -> None:
    # crawl/_build.py turns a CrawlConfig into parts; run.py hands the caller's on to it.
    # No part, and no step of a run's opening, is given the whole config.
    given = {
        p.name: hits
        for p in sorted(CRAWL.rglob("*.py"))
        if (hits := _takes_config(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert set(given) <= {"_build.py", "run.py"}, given


def test_the_config_builds_nothing() -> None:
    # Its methods answer with plain values or another config, never with a part (a filter,
    # a politeness, a resolver map): what is built from it is built in crawl/_build.py.
    tree = ast.parse((CRAWL / "config.py").read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CrawlConfig"]
    returns = {
        n.name: ast.unparse(n.returns) if n.returns is not None else None
        for n in cls.body
        if isinstance(n, ast.FunctionDef)
    }
    plain = {"None", "str", "tuple[str, ...]", "CrawlConfig"}
    assert {name: r for name, r in returns.items() if r not in plain} == {}


def test_the_rule_files_are_loaded_in_one_place() -> None:
    # A run's rule files are loaded where its settings are checked (crawl/_build.py
    # ``checked``), whichever settings those are: given, resumed or joined.
    calls = [
        f"{p.name}:{n.lineno}"
        for p in sorted(CRAWL.rglob("*.py"))
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "load_rules"
    ]
    assert len(calls) == 1, calls

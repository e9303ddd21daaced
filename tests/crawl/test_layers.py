"""crawl/ in two layers (issue 27): decisions that return, an engine that applies them.

Read from the source, as ``tests/test_boundaries.py`` reads imports: no object of the crawl
is given a collaborator after construction (``a.b = c`` where ``a`` is not ``self``), and the
deciding modules never call the admission — spellings and learning return orders
(``crawl/_orders.py``) that the engine hands it.
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

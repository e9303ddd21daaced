"""Every member of the ``CrawlStore`` protocol is exercised by a contract test: a test file
of ``tests/store/`` whose tests take ``open_store`` (so each runs on SQLite and on
PostgreSQL alike). A new store method without such a test fails here (issue 27, item 1)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Protocol

from dustless.store import CrawlStore

HERE = Path(__file__).parent


def protocol_members() -> set[str]:
    """The public names ``CrawlStore`` declares, its per-concern protocols' included."""
    names: set[str] = set()
    for cls in CrawlStore.__mro__:
        if cls is Protocol or not cls.__module__.startswith("dustless."):
            continue
        names.update(n for n in vars(cls) if not n.startswith("_"))
    return names


def contract_files() -> list[Path]:
    return sorted(p for p in HERE.glob("test_*.py") if "open_store" in p.read_text())


def used_members(paths: list[Path]) -> set[str]:
    """Names written as ``something.name`` (a call, or a property read) in ``paths``."""
    return {
        node.attr
        for path in paths
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Attribute)
    }


def test_the_contract_files_are_found() -> None:
    names = {p.name for p in contract_files()}
    assert {"test_store_contract.py", "test_leases.py", "test_learn_store.py"} <= names
    assert len(protocol_members()) > 50


def test_every_store_method_has_a_contract_test() -> None:
    missing = protocol_members() - used_members(contract_files())
    assert not missing, f"CrawlStore members no contract test uses: {sorted(missing)}"


# Each concern's code on both stores lives in files of one name: ``_sqlite_X.py`` and
# ``_pg_X.py`` (the store classes' own files for the session), so the two are read and
# changed side by side.
CONCERN_FILES = {
    "StoreSession": "",
    "WorkStore": "_work",
    "URLStore": "_urls",
    "FetchStore": "_fetches",
    "SiteStore": "_sites",
    "SpellingStore": "_spellings",
    "LearnStore": "_learn",
}


def _defined_in(cls: type, name: str) -> str:
    member = getattr(cls, name)
    code = member.fget if isinstance(member, property) else member
    return code.__module__.rsplit(".", 1)[1]  # a wrapper's is the wrapped function's


def test_each_concern_lives_in_files_of_one_name_on_both_stores() -> None:
    from dustless.store import PostgresCrawlStore, SQLiteStore

    concerns = [c for c in CrawlStore.__mro__[1:] if c.__module__ == CrawlStore.__module__]
    assert sorted(c.__name__ for c in concerns) == sorted(CONCERN_FILES)
    misplaced = []
    for concern in concerns:
        suffix = CONCERN_FILES[concern.__name__]
        for name in (n for n in vars(concern) if not n.startswith("_")):
            where = (_defined_in(SQLiteStore, name), _defined_in(PostgresCrawlStore, name))
            if where != ("_sqlite" + suffix, "_pg" + suffix):
                misplaced.append((concern.__name__, name, where))
    assert not misplaced

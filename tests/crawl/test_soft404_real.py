"""Soft 404s on the ``real`` test web (issue 25): Tomcat's site (``real1`` of seed 3, story
``tomcat``: ``soft404``) answers every broken link with 200 and "Page not found" in its
template. Every URL the truth's 4th column calls ``soft404`` must end in state ``soft404``,
no URL it calls ``doc`` may, and ``stats`` and ``evaluate`` (with ``--truth`` too) count
them apart from the documents."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from dustless.cli.main import main
from dustless.testweb._corpus import load_corpus
from support import require


def test_every_soft_404_of_the_truth_and_no_document_is_recorded_soft404(
    testweb_factory: Any, tmp_path: Path, capsys: Any
) -> None:
    found = load_corpus()
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    web = testweb_factory(profile="real", seed=3, sites=3, pages_per_site=15)
    assert web.sites["real1"]["behaviours"]["soft404"], web.sites["real1"]
    out = tmp_path / "crawl"
    subprocess.run(
        [sys.executable, "-m", "dustless", "crawl", *web.seeds, "--out", str(out),
         "--policy", "standard", *web.resolve_args, "--delay", "0.01", "--delay-factor", "0",
         "--quiet"],
        check=True, timeout=600,
    )  # fmt: skip
    kinds = {row.url: row.kind for row in web.truth()}
    with sqlite3.connect(out / "crawl.db") as db:
        states = dict(
            db.execute(
                "SELECT u.url, f.state FROM fetches f JOIN urls u ON u.id = f.url_id "
                "WHERE f.id IN (SELECT max(id) FROM fetches GROUP BY url_id)"
            ).fetchall()
        )
    soft = [u for u, s in states.items() if kinds.get(u) == "soft404"]
    assert len(soft) >= 5, "the crawl met too few soft 404s to tell anything"
    assert [u for u in soft if states[u] != "soft404"] == []
    assert [u for u, s in states.items() if s == "soft404" and kinds.get(u) != "soft404"] == []

    # stats: out of the documents, on a line of their own.
    assert main(["stats", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["soft404s"] == len(soft)
    with sqlite3.connect(out / "crawl.db") as db:
        (docs,) = db.execute(
            "SELECT count(*) FROM fetches WHERE state IN ('OK', 'code', 'pBig', 'pFlat') "
            "AND status BETWEEN 200 AND 299 AND content_sha1 IS NOT NULL"
        ).fetchone()
    assert stats["documents"] == docs

    # evaluate, by content and by the truth: the soft 404s are no document of either.
    for extra in ([], ["--truth", str(web.truth_path)]):
        assert main(["evaluate", str(out), "--json", *extra]) == 0
        ev = json.loads(capsys.readouterr().out)["evaluation"]
        assert ev["soft404s"] == len(soft)

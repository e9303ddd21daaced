"""``evaluate`` on the ``real`` test web: the factors real sites need, and what is left.

Seed 3 with 3 sites (docs/testweb.md "Real sites"): ``real1`` is Tomcat (``;jsessionid=`` on
every link, soft 404s), ``real2`` serves an Apache listing on ``files.real2`` with its sort
links ``?C=N;O=D``. The ``path-params`` and ``sort-view-params`` factors must find those
duplicates, and the "unexplained duplicates" line must count what no factor merges.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support import require

from dustless.analysis._factors import remove_path_params
from dustless.cli.main import main
from dustless.testweb._corpus import load_corpus


@pytest.fixture
def real_crawl(testweb_factory: Any, tmp_path: Path) -> tuple[Path, Any]:
    found = load_corpus()
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    web = testweb_factory(profile="real", seed=3, sites=3, pages_per_site=15)
    assert web.sites["real1"]["behaviours"]["jsessionid"], web.sites["real1"]
    # The Apache listing lives on its own host (files.real2), which no page links to.
    listings = [f"http://{h}:{web.port}/" for h in web.hosts if h.startswith("files.")]
    assert listings, web.hosts
    out = tmp_path / "crawl"
    subprocess.run(
        [sys.executable, "-m", "dustless", "crawl", *web.seeds, *listings, "--out", str(out),
         "--policy", "standard", *web.resolve_args, "--delay", "0.01", "--delay-factor", "0",
         "--quiet"],
        check=True, timeout=600,
    )  # fmt: skip
    return out, web


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["evaluate", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_path_params_and_sort_view_params_on_the_real_web(
    real_crawl: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _web = real_crawl
    data = _json(capsys, str(out))
    rows = {(r["factor"], r["method"]): r for r in data["rows"]}
    # Tomcat's ;jsessionid= gives every page one spelling per page that links it: the
    # factor's sets are redundant, and removing the parameter loses nothing.
    params = rows["path-params", "none"]
    assert params["sets"] > 0
    assert params["redundancy_rate"] > 0.5
    assert rows["path-params", "remove"]["redundancy_rate"] == 0.0
    assert rows["path-params", "remove"]["coverage_loss_rate"] == 0.0
    # Apache's ?C=N;O=D re-sorts one listing.
    sort = rows["sort-view-params", "none"]
    assert sort["sets"] > 0
    assert sort["redundancy_rate"] > 0
    assert rows["sort-view-params", "remove"]["redundancy_rate"] == 0.0
    assert rows["sort-view-params", "remove"]["coverage_loss_rate"] == 0.0
    # Measured only: no normalizer step stands for them, so the policy never names them.
    choices = {f for f, _m in data["recommendation"]["choices"]}
    assert not choices & {"path-params", "sort-view-params"}

    left = data["evaluation"]["unexplained"]
    assert left["duplicates"] == left["explained"] + left["unexplained"]
    assert 0 < left["unexplained"] < left["duplicates"]
    assert left["unexplained_share"] == pytest.approx(left["unexplained"] / left["duplicates"])
    assert 1 <= len(left["examples"]) <= 5
    # Tomcat's soft 404 (one "not found" page for every broken link) is set apart: the
    # crawl recorded it (state soft404, crawl/soft404.py), so no guess is left to make.
    assert data["evaluation"]["soft404s"] >= 1
    for a, b in left["examples"]:
        assert a != b
        # explained by path-params: never a pair that differs only in its sessions (what is
        # left may carry one, e.g. the www twin's page of another site's document)
        assert remove_path_params(a) != remove_path_params(b)

    assert main(["evaluate", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"unexplained duplicates: {left['unexplained']:,} of {left['duplicates']:,}" in text
    assert "path-params" in text
    assert "sort-view-params" in text
    a, b = left["examples"][0]
    assert f"  {a}  =  {b}" in text

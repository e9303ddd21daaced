"""What the crawler's pattern-script tests share: seed 002's Fig. 6 script, a script naming one
category, and a crawl of the test web's ``www.web.com`` with a script."""

from __future__ import annotations

from pathlib import Path

FIG6 = Path(__file__).resolve().parents[1] / "rules" / "data" / "fig6.xml"

# Only category 467 is named: the other categories' links are filtered out (§3.4.1).
ONE_CATEGORY = """<crawlscript>
<site title="one category">
<identity value="www.web.com"/>
<url type="list" class="인물" categoryKey="467">
<originalAddr type="url">http://www.web.com/list.aspx?cate_id=467&amp;page={0}</originalAddr>
<targetAddr>http://www.web.com/list.aspx?cate_id=467&amp;page={0}</targetAddr>
</url>
<url type="detail" class="인물">
<originalAddr type="javascript">javascript:show_detail({0})</originalAddr>
<targetAddr>http://www.web.com/detail.aspx?per_id={0}</targetAddr>
</url>
</site>
</crawlscript>
"""


def web_seed(web) -> str:
    [seed] = [s for s in web.seeds if "www.web.com" in s]
    return seed


def crawl_web(web, out: Path, script: Path, ch):
    """Crawl ``www.web.com`` from its seed with ``script`` (``dustless crawl --script``)."""
    return ch.crawl(
        web,
        out,
        seeds=(web_seed(web),),
        resolve=("www.web.com:127.0.0.1",),
        scripts=(str(script),),
        concurrency=4,
    )

"""What normalization costs and saves, and how pages change: the pure analysis core.

Values in, values out — no clock, no SQL (CONVENTIONS "Pure core"): the rows come from the
store's named reads (``dustless.store``: ``stat_reads``, ``evaluation_rows``, ``history_rows``
…); the few entry points that take a ``CrawlReader`` (``crawl_stats``, ``load_observations``,
``read_histories``; ``read_observations`` opens the crawl itself) ask them, then compute over
the rows with pure functions (``stats_from_reads`` …). The statistics are one table model
(``stat_tables``: :class:`Table`) that ``stats`` renders as text and ``report`` as HTML.

* Seed 000 §3: candidate sets, redundancy rate (formula 1), coverage loss rate
  (formula 2), Table 1-shaped rows per host and overall, on near-duplicate content classes
  (``near_classes``) or payload hashes, coverage loss read as the crawler fetches or as the
  paper does, the test web's truth as the judge, and a recommended policy — overall and per
  host (the site policy) — under a coverage-loss budget.
* Seed 004 §4: per-page change summaries over batch crawls, SS and FF (formulas 1 and 2),
  grouping by domain suffix / depth / link kind (Tables 7–13); how often a sitemap's
  lastmod agreed with the changes seen.
* Change-rate estimators (naive; Cho & Garcia-Molina 2003), a feature-based predictor, and
  revisit schedules under a budget (uniform, proportional, optimal; Cho & Garcia-Molina 2000).

See ``docs/analysis.md`` for the formulas and the papers' numbers.
"""

from dustless.analysis._changes import (
    LINK_KIND_CLASSES,
    BatchSummary,
    ChangeGroup,
    ChangeSummary,
    Visit,
    domain_suffix,
    download_histogram,
    ff,
    group_changes,
    link_kind_class,
    ss,
    summarize_batches,
    summarize_changes,
)
from dustless.analysis._changes_db import (
    ChangeReport,
    PageHistory,
    crawl_change_report,
    read_histories,
)
from dustless.analysis._content import CONTENT_MODES, document_classes
from dustless.analysis._estimate import (
    PageFeatures,
    PredictionError,
    RatePredictor,
    estimate_rate,
    evaluate_rate_predictor,
    fit_rate_predictor,
    holdout_split,
    naive_rate,
    poisson_rate,
)
from dustless.analysis._evaltext import format_evaluation
from dustless.analysis._evaltypes import Disagreement, HostPolicy
from dustless.analysis._evaluate import (
    Evaluation,
    EvaluationRow,
    build_factors,
    evaluate_crawl,
    load_observations,
    paper_figures,
    unfetched_forms,
)
from dustless.analysis._factors import PAPER_DEFAULT_DOCUMENTS
from dustless.analysis._jsonio import to_jsonable
from dustless.analysis._lastmod import LastmodAgreement, lastmod_agreement, lastmod_moved
from dustless.analysis._learnobs import read_observations
from dustless.analysis._learnstats import learned_rules
from dustless.analysis._metrics import (
    READINGS,
    CandidateSet,
    CrawlIndex,
    Factor,
    MethodRow,
    MethodSpec,
    Observation,
    candidate_sets,
    coverage_loss_rate,
    evaluate,
    evaluate_factor,
    redundancy_rate,
)
from dustless.analysis._near import near_classes
from dustless.analysis._recommend import (
    FACTOR_METHODS,
    PAPER_TABLE_1,
    PaperRow,
    Recommendation,
    recommend,
)
from dustless.analysis._schedule import (
    expected_freshness,
    freshness,
    optimal_schedule,
    pick_due,
    proportional_schedule,
    schedule,
    uniform_schedule,
)
from dustless.analysis._sitepolicy import write_site_policy
from dustless.analysis._stats import (
    CrawlStats,
    StateCount,
    StatusCount,
    crawl_stats,
    status_meaning,
)
from dustless.analysis._stattables import (
    HTML_STYLE,
    STATE_MEANINGS,
    TEXT_STYLE,
    StatTables,
    Table,
    TableStyle,
    render_text,
    stat_tables,
)
from dustless.analysis._text import format_stats
from dustless.analysis._truth import TruthEntry, TruthRates, parse_truth, parse_truth_line

__all__ = [
    "CONTENT_MODES",
    "FACTOR_METHODS",
    "HTML_STYLE",
    "LINK_KIND_CLASSES",
    "PAPER_DEFAULT_DOCUMENTS",
    "PAPER_TABLE_1",
    "READINGS",
    "STATE_MEANINGS",
    "TEXT_STYLE",
    "BatchSummary",
    "CandidateSet",
    "ChangeGroup",
    "ChangeReport",
    "ChangeSummary",
    "CrawlIndex",
    "CrawlStats",
    "Disagreement",
    "Evaluation",
    "EvaluationRow",
    "Factor",
    "HostPolicy",
    "LastmodAgreement",
    "MethodRow",
    "MethodSpec",
    "Observation",
    "PageFeatures",
    "PageHistory",
    "PaperRow",
    "PredictionError",
    "RatePredictor",
    "Recommendation",
    "StatTables",
    "StateCount",
    "StatusCount",
    "Table",
    "TableStyle",
    "TruthEntry",
    "TruthRates",
    "Visit",
    "build_factors",
    "candidate_sets",
    "coverage_loss_rate",
    "crawl_change_report",
    "crawl_stats",
    "document_classes",
    "domain_suffix",
    "download_histogram",
    "estimate_rate",
    "evaluate",
    "evaluate_crawl",
    "evaluate_factor",
    "evaluate_rate_predictor",
    "expected_freshness",
    "ff",
    "fit_rate_predictor",
    "format_evaluation",
    "format_stats",
    "freshness",
    "group_changes",
    "holdout_split",
    "lastmod_agreement",
    "lastmod_moved",
    "learned_rules",
    "link_kind_class",
    "load_observations",
    "naive_rate",
    "near_classes",
    "optimal_schedule",
    "paper_figures",
    "parse_truth",
    "parse_truth_line",
    "pick_due",
    "poisson_rate",
    "proportional_schedule",
    "read_histories",
    "read_observations",
    "recommend",
    "redundancy_rate",
    "render_text",
    "schedule",
    "ss",
    "stat_tables",
    "status_meaning",
    "summarize_batches",
    "summarize_changes",
    "to_jsonable",
    "unfetched_forms",
    "uniform_schedule",
    "write_site_policy",
]

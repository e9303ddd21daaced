"""The values ``dustless evaluate`` returns (``--json`` prints them; ``report`` reads them).

Every row exists overall (``host`` None) and per host (``host_rows``): seed 000 §4.1 says why
— case folding is right on a Windows server and wrong on a Unix one, so one crawl-wide figure
can hide a loss on one host behind a gain on another.
"""

from __future__ import annotations

from dataclasses import dataclass

from dustless.analysis._canonical_eval import CanonicalRow

__all__ = [
    "Disagreement",
    "Evaluation",
    "EvaluationRow",
    "HostPolicy",
    "RecommendedPolicy",
    "RowDetail",
    "Unexplained",
    "VariantRule",
]


@dataclass(frozen=True, slots=True)
class EvaluationRow:
    """One row of ``evaluate --json``, shaped like seed 000 Table 1 (its fields are the JSON
    keys)."""

    factor: str
    method: str
    candidate_urls: int
    sets: int
    requests: int
    downloads: int
    unique_documents: int
    redundancy_rate: float
    coverage_loss_rate: float
    coverage_loss_measured: bool
    true_fp_rate: float | None
    true_fn_rate: float | None
    host: str | None = None  # None: the whole crawl; else the host of the rows' sets


@dataclass(frozen=True, slots=True)
class RowDetail:
    """The rest of a :class:`~dustless.analysis.MethodRow`: what the row's figures come from."""

    factor: str
    method: str
    steps: tuple[str, ...]
    normal_documents: int  # N_normal of formula (2)
    unmeasured_sets: int  # sets whose normalized form the crawl never requested
    set_downloads: int  # Σ n(D_i)
    set_unique_documents: int  # Σ un(D_i)
    set_redundancy_rate: float
    duplicates_removed: int
    # Against --truth: pairs of URLs within the candidate sets (TruthRates), of which same
    # resource, the pairs the method merges, its wrong merges (FP) and wrong splits (FN), and
    # the share of its merges that are wrong (FP / merged pairs).
    true_pairs: int | None
    true_same_pairs: int | None
    merged_pairs: int | None
    false_positives: int | None
    false_negatives: int | None
    wrong_merge_share: float | None
    host: str | None = None


@dataclass(frozen=True, slots=True)
class RecommendedPolicy:
    """The recommender's answer (000 §5) as a policy expression usable with ``--policy``."""

    policy: str
    steps: tuple[str, ...]
    choices: tuple[tuple[str, str], ...]
    coverage_loss: float
    max_loss: float
    duplicates_removed: int


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The recommendation for one host: the methods within the loss budget on its own sets.

    ``evaluate --rules-out`` writes these as site rules (``dustless crawl --rules``).
    """

    host: str
    choices: tuple[tuple[str, str], ...]
    steps: tuple[str, ...]
    coverage_loss: float
    duplicates_removed: int


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A row where the truth and the content estimate differ by more than the tolerance."""

    host: str | None
    factor: str
    method: str
    what: str  # "redundancy" or "coverage loss"
    truth: float
    content: float


@dataclass(frozen=True, slots=True)
class Unexplained:
    """The duplicate fetches no factor's method merges (docs/evaluation.md "Unexplained
    duplicates"): of the ``duplicates`` (in each class of one document, every fetch but the
    first), ``unexplained`` remain once every method of every factor has merged what it
    merges; ``examples`` are up to 5 pairs of such URLs. Classes served by more than
    ``SOFT404_SPELLINGS`` unrelated URLs are counted apart as soft 404s (``soft404_*``)."""

    duplicates: int
    explained: int
    unexplained: int
    unexplained_share: float
    soft404_classes: int
    soft404_fetches: int
    examples: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class VariantRule:
    """A site rule a variant factor's method stands for on one host (what the crawl showed
    it merge there): ``dropParam`` ``name``, ``stripPrefix`` ``name``, ``queryToPath``
    ``name`` (``/index.php?page``) → ``to``, or
    ``hostRedirect`` to ``to`` on the host ``identity``. ``host`` is the host of the sets
    (the bare host for ``variant-hosts``, as for ``www``)."""

    host: str
    factor: str
    element: str
    identity: str
    name: str = ""
    to: str = ""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything ``dustless evaluate`` prints (``--json`` adds ``recommended_policy`` as a
    string next to ``rows``)."""

    directory: str
    batches: tuple[int, ...]
    urls: int  # |U|: distinct URLs requested, after standard normalization
    downloaded: int  # of them, with a document
    probe_fetches: int  # fetches of normalized forms by `evaluate --fetch`, all runs
    default_documents: tuple[str, ...]
    follow_redirects: bool
    truth_file: str | None
    rows: tuple[EvaluationRow, ...]
    details: tuple[RowDetail, ...]
    recommendation: RecommendedPolicy
    # What the figures are read from (docs/evaluation.md): the content identity ("near" or
    # "exact"), whether the rows are the truth's ("truth") or the crawl's content's
    # ("content"), and the reading of coverage loss ("crawler" or "paper", with tries).
    content: str = "near"
    identity: str = "content"
    reading: str = "crawler"
    spelling_tries: int = 3
    host_rows: tuple[EvaluationRow, ...] = ()
    host_details: tuple[RowDetail, ...] = ()
    site_policy: tuple[HostPolicy, ...] = ()
    disagreements: tuple[Disagreement, ...] = ()
    # The canonical row: each method against the pages' rel=canonical declarations.
    canonical: tuple[CanonicalRow, ...] = ()
    # Duplicate fetches that no factor accounts for (None: not computed).
    unexplained: Unexplained | None = None
    # URLs whose fetch the crawl recorded as a soft 404 (state soft404): no document, in
    # no count above (crawl/soft404.py).
    soft404s: int = 0
    # The site rules of the variant factors' methods, per host (``--rules-out`` writes them).
    variant_rules: tuple[VariantRule, ...] = ()

    @property
    def estimated(self) -> bool:
        return not all(r.coverage_loss_measured for r in self.rows)

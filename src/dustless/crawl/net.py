"""The fetch stack of a crawl as the engine sees it; the fetcher itself — resolver
(``--resolve``), address policy, limits — is made from the settings in ``crawl/_build.py``.

Addresses: by default no connection to loopback, private or link-local addresses — a public
page linking to 169.254.169.254 must not reach it — unless ``--allow-private``, the host was
given with ``--resolve``, or the seeds the user typed on the command line are on such
addresses (the crawl was pointed there on purpose). Seeds read from a file are not trusted
that way: the file may be a previous crawl's ``seeds.out.txt``, whose discovered seeds are
whatever hostile pages linked to. ``--allow-ip``/``--deny-ip`` add
CIDR ranges (004 §2 decided per seed by IP address: "시드 수행 결정").
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Iterable, Mapping
from typing import Protocol

from dustless.errors import FetchError, InvalidURL
from dustless.fetch import BodySink, Fetcher, FetchLimits, FetchResult
from dustless.states import NetState
from dustless.url import authority_of, hostname_of

__all__ = ["Fetcher", "Fetches", "failure_kind", "resolve_first", "seed_ips"]


class Fetches(Protocol):
    """What the engine needs of a fetcher: ``dustless.fetch.Fetcher``, or a test's fake that
    answers from a table (the engine's tests run without sockets)."""

    @property
    def limits(self) -> FetchLimits: ...

    async def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> FetchResult: ...

    async def fetch_with(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        limits: FetchLimits,
        *,
        keep_prefix: bool = False,
        sink: BodySink | None = None,
    ) -> FetchResult: ...

    async def close(self) -> None: ...


async def resolve_first(fetcher: Fetches, url: str) -> None:
    """Look ``url``'s host up ahead of its request: the fetcher's resolver keeps the answer
    (a failure too, briefly), so its own lookup finds it at once and what the caller checks
    next — the lease fence — holds right before the request is sent. Nothing for a fetcher
    without a resolver (a test's fake); what the lookup says is the fetch's to report."""
    if not isinstance(fetcher, Fetcher):
        return
    with contextlib.suppress(FetchError, InvalidURL):
        await fetcher.resolver.resolve(hostname_of(authority_of(url)).strip("[]"))


# States whose name says less than a word: the seed's names stay for the rest (hSht, dErr, …).
_STATE_KINDS = {
    NetState.noIP: "DNS",
    NetState.cTim: "timeout",
    NetState.hTim: "timeout",
    NetState.dTim: "timeout",
    NetState.hNpr: "not HTTP",
    NetState.iErr: "internal",
}


def failure_kind(state: NetState, error: str | None) -> str:
    """What went wrong in a failed fetch, in the word a user acts on: ``certificate``
    (the fix is often ours: ``--ca-file``), ``DNS``, ``refused``, ``unreachable``,
    ``timeout``, ``reset``, ``internal``; otherwise the state's own name.

    The fetcher's error line starts with the exception's name
    (``ConnectionRefusedError: …``, ``SSLCertVerificationError: … certificate verify
    failed``, ``ConnectionResetError: …``): a cErr alone would lump a refused certificate
    with a server that is down."""
    text = (error or "").lower()
    if state in (NetState.cErr, NetState.hErr):
        if "certificate" in text:
            return "certificate"
        if "refused" in text:
            return "refused"
        if "unreachable" in text or "no route" in text:
            return "unreachable"
    if state in (NetState.cErr, NetState.hErr, NetState.hSht, NetState.dErr) and ("reset" in text):
        return "reset"
    return _STATE_KINDS.get(state, state.value)


def seed_ips(trusted: Iterable[str]) -> tuple[str, ...]:
    """Trusted seeds given as IP literals: the crawl was pointed at those addresses on purpose."""
    ips = []
    for url in trusted:
        host = hostname_of(authority_of(url)).strip("[]")
        try:
            ips.append(str(ipaddress.ip_address(host)))
        except ValueError:
            continue
    return tuple(ips)

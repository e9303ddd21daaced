"""Validators for conditional recrawl requests, looked up per window of URLs."""

from __future__ import annotations

import json
from pathlib import Path

from dustless.recrawl import Validator, conditional_batch, entity_tags, validators_for
from dustless.store import FetchRecord, NewURL, SQLiteStore


def test_validators_of_last_downloads(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path) as st:
        st.start_batch("{}", 1.0)
        st.add_urls(
            [NewURL(f"http://a.test/{i}", f"http://a.test/{i}", "a.test", 1) for i in range(5)]
        )
        ids = [i for (i,) in st.query("SELECT id FROM urls ORDER BY id")]
        st.record_fetches(
            [
                FetchRecord(ids[0], 2.0, "OK", status=200, content_sha1="aa", etag='"e0"'),
                FetchRecord(
                    ids[1],
                    2.0,
                    "OK",
                    status=200,
                    content_sha1="bb",
                    last_modified="Sun, 01 Nov 2026 00:00:00 GMT",
                ),
                FetchRecord(ids[2], 2.0, "OK", status=200, content_sha1="cc"),  # no validator
                FetchRecord(ids[3], 2.0, "OK", status=200, content_sha1="dd", etag='"e3"'),
                FetchRecord(ids[3], 3.0, "cTim"),  # last fetch failed: no condition
                FetchRecord(ids[4], 2.0, "code", status=304, content_sha1="ee", etag='"e4"'),
            ]
        )
        got = validators_for(st, ids)
    assert set(got) == {ids[0], ids[1], ids[4]}
    assert got[ids[0]].headers() == {"If-None-Match": '"e0"'}
    assert got[ids[1]].headers() == {"If-Modified-Since": "Sun, 01 Nov 2026 00:00:00 GMT"}
    assert got[ids[4]].sha1 == "ee"
    assert Validator(1, "x", '"e"', "d").headers() == {
        "If-None-Match": '"e"',
        "If-Modified-Since": "d",
    }


def test_conditional_batch() -> None:
    assert conditional_batch(json.dumps({"recrawl": {"conditional": True}}))
    assert not conditional_batch(json.dumps({"recrawl": {"conditional": False}}))
    assert not conditional_batch(json.dumps({"policy": "standard"}))
    assert not conditional_batch("not json")


def test_validators_of_every_document_kind_not_html_alone(tmp_path: Path) -> None:
    # A 200 that is not HTML (state "code": XML, text, PDF …) is a stored document too; a
    # redirect or an error is not, and a 200 cut short (no content hash) neither.
    with SQLiteStore(tmp_path) as st:
        st.start_batch("{}", 1.0)
        st.add_urls(
            [NewURL(f"http://a.test/{i}", f"http://a.test/{i}", "a.test", 1) for i in range(4)]
        )
        ids = [i for (i,) in st.query("SELECT id FROM urls ORDER BY id")]
        st.record_fetches(
            [
                FetchRecord(
                    ids[0], 2.0, "code", status=200, mime="text/xml", content_sha1="x", etag='"x"'
                ),
                FetchRecord(ids[1], 2.0, "code", status=301, content_sha1="r", etag='"r"'),
                FetchRecord(ids[2], 2.0, "code", status=404, content_sha1="n", etag='"n"'),
                FetchRecord(ids[3], 2.0, "dTim", status=200, etag='"d"'),
            ]
        )
        got = validators_for(st, ids)
    assert set(got) == {ids[0]}
    assert got[ids[0]].headers() == {"If-None-Match": '"x"'}


def test_a_compressed_responses_etag_is_sent_with_and_without_its_suffix() -> None:
    # Apache's mod_deflate answers "x-gzip" but matches If-None-Match against "x".
    assert entity_tags('"19db-653abe6906640-gzip"') == [
        '"19db-653abe6906640-gzip"',
        '"19db-653abe6906640"',
    ]
    assert Validator(1, "s", 'W/"a-br"', None).headers() == {"If-None-Match": 'W/"a-br", W/"a"'}
    assert entity_tags('"plain"') == ['"plain"']
    assert entity_tags('"gzip"') == ['"gzip"']  # a tag that is only the word: no suffix

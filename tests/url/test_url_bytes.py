"""URLs as bytes: what a crawl log holds is not always UTF-8.

A byte that is not part of valid UTF-8 is kept, written ``%XX`` (RFC 3986 §2.1), whether the
URL comes as ``bytes``, as a ``str`` holding surrogate escapes (what Python's
``surrogateescape`` makes of such a byte: ``sys.argv``, file names), as a command-line argument
or on standard input. Any other lone surrogate is no character: ``InvalidURL``, never a
``UnicodeEncodeError``.
"""

import os
import subprocess
import sys

import pytest

from dustless.errors import InvalidURL
from dustless.url import (
    POLICIES,
    explain,
    host_of,
    normalize,
    resolve,
    split_url,
)

POLICY_NAMES = list(POLICIES)
RAW = b"http://h.test/caf\xe9/\xff\xfe?x=\xc7\xd1"


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_bytes_that_are_not_utf8_come_back_percent_encoded(policy):
    expected = {
        "paper": "http://h.test/caf%E9/%FF%FE/?x=%C7%D1",
        "aggressive": "http://h.test/caf%E9/%FF%FE/?x=%C7%D1",
    }.get(policy, "http://h.test/caf%E9/%FF%FE?x=%C7%D1")
    assert normalize(RAW, policy) == expected
    # the same bytes after surrogateescape (sys.argv, os.fsdecode) mean the same URL
    assert normalize(RAW.decode("utf-8", "surrogateescape"), policy) == expected


def test_valid_utf8_bytes_are_characters():
    assert normalize("http://h.test/café".encode()) == "http://h.test/caf%C3%A9"
    assert normalize(b"http://B\xc3\xbccher.de/") == "http://xn--bcher-kva.de/"


def test_a_byte_in_the_host_is_kept():
    assert normalize(b"http://\x80.com/") == "http://%80.com/"
    assert normalize("http://\udc80.com/", "paper") == "http://%80.com/"
    assert host_of(b"http://\x80.COM/") == "%80.com"
    assert split_url(b"http://h/\xff").path == "/%FF"


@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("url", ["C://\ud800", "http://h/\udbff", "http://\udfff.com/", "x\ud800"])
def test_a_lone_surrogate_is_invalid_url_under_every_policy(policy, url):
    # InvalidURL, whichever fault is found first ("x\ud800" has no scheme either)
    with pytest.raises(InvalidURL, match=r"lone surrogate|missing scheme"):
        normalize(url, policy)
    with pytest.raises(InvalidURL, match=r"lone surrogate|missing scheme"):
        explain(url, policy)


def test_a_lone_surrogate_elsewhere_in_the_api():
    for call in (
        lambda: host_of("http://\ud800/"),
        lambda: split_url("http://h/\ud800"),
        lambda: resolve("http://h/", "/\ud800"),
        lambda: resolve("http://h/\ud800", "/x"),
    ):
        with pytest.raises(InvalidURL):
            call()
    assert resolve("http://h/", "/caf\udce9") == "http://h/caf%E9"


def test_explain_shows_the_bytes_as_read():
    changes = explain(b"HTTP://h/\xff", "rfc3986")
    assert changes[0].before == "HTTP://h/%FF"
    assert changes[-1].after == "http://h/%FF"


def run_cli(*args, stdin=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "dustless", "normalize", *args],
        input=stdin,
        capture_output=True,
        check=False,
        env=env,
    )


def test_control_and_non_ascii_host_bytes_as_an_argument():
    proc = run_cli("--policy", "google-safebrowsing", b"http://\x01\x80.com/")
    assert proc.stdout == b"http://%01%80.com/\n"


def test_bytes_on_stdin_and_as_arguments_give_the_same_bytes_back():
    proc = run_cli(stdin=RAW + b"\n")
    assert proc.returncode == 0
    assert proc.stdout == b"http://h.test/caf%E9/%FF%FE?x=%C7%D1\n"
    assert run_cli(RAW).stdout == proc.stdout


@pytest.mark.parametrize("encoding", ["utf-8:strict", "ascii", "latin-1"])
def test_explain_from_stdin_never_gives_a_traceback(encoding):
    # Whatever the locale says, the output is UTF-8 and the input bytes are read as bytes.
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    proc = run_cli("--explain", stdin=b"HTTP://a.com/caf\xe9\nnope\n", env=env)
    err = proc.stderr.decode("utf-8")
    assert "Traceback" not in err
    assert err == "error: line 2: missing scheme\n"
    assert proc.returncode == 1
    out = proc.stdout.decode("utf-8").splitlines()
    assert out[0] == "HTTP://a.com/caf%E9"
    assert out[-1] == "= http://a.com/caf%E9"
    assert "→ http://a.com/caf%E9" in proc.stdout.decode("utf-8")


def test_explain_arguments_with_bytes():
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    proc = run_cli("--explain", b"http://A.com/\xff", env=env)
    assert proc.returncode == 0
    assert proc.stdout.decode("utf-8").splitlines()[-1] == "= http://a.com/%FF"

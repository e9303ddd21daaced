"""``dustless normalize`` as a user runs it: a subprocess."""

import subprocess
import sys

import pytest

from dustless.url import STEPS


def dustless(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "dustless", "normalize", *args],
        input=stdin,
        capture_output=True,
        check=False,
    )


def test_arguments():
    proc = dustless("HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top", "http://a.com/%7Ex")
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == [
        "http://example.com/a/c?b=2&a=1#top",
        "http://a.com/~x",
    ]
    assert proc.stderr == b""


def test_policy_enable_disable():
    proc = dustless(
        "--policy",
        "paper",
        "--enable",
        "remove-www",
        "--disable",
        "add-trailing-slash",
        "http://WWW.acm.org/Pubs",
    )
    assert proc.stdout.decode() == "http://acm.org/pubs\n"
    proc = dustless("--policy", "paper + remove-www", "http://WWW.acm.org/Pubs")
    assert proc.stdout.decode() == "http://acm.org/pubs/\n"


def test_stdin_is_line_aligned_and_errors_go_to_stderr():
    stdin = (
        b"HTTP://A.com/x\n"
        b"not a url\n"
        b"\n"
        b"http://a.com:99999/\n"
        b"http://b.com/\xff\n"
        b"http://c.com/%7e\r\n"
        b"http://d.com/last"  # no final newline
    )
    proc = dustless(stdin=stdin)
    assert proc.returncode == 1
    assert proc.stdout.decode().split("\n") == [
        "http://a.com/x",
        "",
        "",
        "",
        "http://b.com/%FF",  # a byte that is not UTF-8 is kept, percent-encoded
        "http://c.com/~",
        "http://d.com/last",
        "",
    ]
    assert proc.stderr.decode().splitlines() == [
        "error: line 2: missing scheme",
        "error: line 3: empty URL",
        "error: line 4: invalid port '99999'",
    ]


def test_stdin_all_good_exits_zero():
    urls = b"".join(b"http://h%d.com/P%d\n" % (i, i) for i in range(5000))
    proc = dustless("--policy", "paper", stdin=urls)
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 5000
    assert lines[4999] == "http://h4999.com/p4999/"


def test_bad_argument_gives_empty_line_and_error():
    proc = dustless("http://ok.com", "nope")
    assert proc.returncode == 1
    assert proc.stdout.decode() == "http://ok.com/\n\n"
    assert proc.stderr.decode() == "error: argument 2: missing scheme\n"


def test_list_steps_in_order_with_safety():
    proc = dustless("--list-steps")
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    assert [line.split()[0] for line in lines] == list(STEPS)
    assert lines[0].split()[1] == "safe"


def test_list_policies():
    out = dustless("--list-policies").stdout.decode()
    for name in ("rfc3986:", "standard:", "paper:", "aggressive:", "google-safebrowsing:"):
        assert name in out


def test_explain():
    proc = dustless("--policy", "aggressive", "--explain", "HTTP://www.A.com/x/index.html#f")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    for step in ("lowercase-scheme", "lowercase-host", "remove-www", "remove-default-document"):
        assert step in out
    assert out.splitlines()[-1] == "= http://a.com/x/"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "nope", "http://a"], "unknown policy 'nope'"),
        (["--enable", "nope", "http://a"], "unknown step 'nope'"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args, message):
    proc = dustless(*args)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert message in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_help_has_examples():
    proc = dustless("--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "examples:" in out
    assert "--list-steps" in out


def test_command_does_not_import_heavy_modules():
    code = (
        "import sys\n"
        "from dustless.cli.main import main\n"
        "main(['normalize', 'http://a.com'])\n"
        "heavy = [m for m in ('aiohttp', 'rich', 'starlette', 'selectolax', 'warcio') "
        "if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert proc.stdout.decode().splitlines()[-1] == "[]"


def test_explain_from_stdin_and_errors():
    proc = dustless("--explain", stdin=b"http://A.com\nnope\n")
    assert proc.returncode == 1
    assert "lowercase-host" in proc.stdout.decode()
    assert proc.stderr.decode() == "error: line 2: missing scheme\n"

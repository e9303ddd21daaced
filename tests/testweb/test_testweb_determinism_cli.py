"""Same seed → byte-identical web; the command's output, options and shutdown."""

import asyncio
import signal
import subprocess
import sys

import pytest

from dustless.testweb import Profile, WebConfig, build_web, render_page
from testweb_fixture import LoopbackClient, start_testweb

SKIP = ("/slow/", "/reset/", "/big/", "/bomb.html")


async def bodies(web, rows):
    async with LoopbackClient() as c:
        return [(await c.get(r.url)).body for r in rows]


def test_same_seed_gives_byte_identical_sites(tmp_path):
    a = start_testweb(tmp_path / "a", profile="mixed", seed=42, sites=8, pages_per_site=12)
    b = start_testweb(tmp_path / "b", profile="mixed", seed=42, sites=8, pages_per_site=12)
    try:
        assert a.port != b.port
        ta = a.truth_path.read_text().replace(f":{a.port}", ":PORT")
        tb = b.truth_path.read_text().replace(f":{b.port}", ":PORT")
        assert ta == tb
        assert a.hosts == b.hosts
        rows_a = [r for r in a.truth() if not any(s in r.url for s in SKIP)]
        rows_b = [r for r in b.truth() if not any(s in r.url for s in SKIP)]
        got_a = asyncio.run(bodies(a, rows_a))
        got_b = asyncio.run(bodies(b, rows_b))
        port_a, port_b = f":{a.port}".encode(), f":{b.port}".encode()
        assert [x.replace(port_a, b":PORT") for x in got_a] == [
            y.replace(port_b, b":PORT") for y in got_b
        ]
    finally:
        a.stop()
        b.stop()


def test_the_model_is_a_function_of_its_config():
    def everything(seed):
        web = build_web(WebConfig(seed=seed, sites=8, pages_per_site=12, port=9000))
        return [(p.url, render_page(p, 3)) for s in web.sites for p in s.pages()]

    assert everything(5) == everything(5)
    assert everything(5) != everything(6)


def test_output_lines_and_clean_exit_on_sigterm(tmp_path):
    web = start_testweb(tmp_path, profile="dirty", sites=4, pages_per_site=10)
    out = web.output
    assert out[0] == f"serving 127.0.0.1:{web.port}"
    hosts = [line[5:] for line in out if line.startswith("host ")]
    seeds = [line[5:] for line in out if line.startswith("seed ")]
    assert hosts == web.hosts
    assert seeds == web.seeds
    assert len(out) == 1 + len(hosts) + len(seeds)
    assert all(f":{web.port}/" in s for s in seeds)
    assert "www.web.com" in hosts
    assert "shopping.naver.test" in hosts
    assert all(h.endswith(".test") for h in hosts if h != "www.web.com")
    proc = web.process
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    web.stop()
    assert "Traceback" not in (tmp_path / f"{web.truth_path.stem}.stderr").read_text()


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "dustless", "testweb", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_help_has_an_example():
    proc = run_cli("--help")
    assert proc.returncode == 0
    assert "examples:" in proc.stdout
    assert "dustless testweb --seed" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--pages-per-site", "1"), "--pages-per-site"),
        (("--addresses", "2", "--host", "10.0.0.1"), "loopback"),
        (("--host", "localhost"), "IPv4"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args, message):
    proc = run_cli("--port", "0", *args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_port_in_use_is_one_line(testweb_factory):
    web = testweb_factory(profile="clean", sites=3, pages_per_site=20)
    proc = run_cli("--port", str(web.port))
    assert proc.returncode == 2
    assert "cannot listen" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_hosts_spread_over_loopback_addresses(testweb_factory):
    web = testweb_factory(
        profile="clean", sites=4, pages_per_site=10, extra_args=("--addresses", "2")
    )
    second = [s for s in web.sites.values() if s["address"] == "127.0.0.2"]
    assert second
    host = second[0]["hosts"][0]
    assert f"{host}:127.0.0.2" in web.resolve_args
    async with LoopbackClient(address="127.0.0.2") as c:
        got = await c.get(web.url(host))
    assert got.status == 200
    stats = web.stats()
    assert stats["addresses"]["127.0.0.2"]["requests"] == 1
    assert Profile.CLEAN.value == web.profile

"""HTTPS: the connection goes to the --resolve address, SNI and Host name the URL's host."""

import datetime
import http.server
import re
import ssl
import threading
from dataclasses import replace

from aiohttp import web

import support
from dustless.fetch import AddressPolicy, Fetcher, FetchLimits, NetState, Resolver

FAST = FetchLimits(stall_timeout=1.0, connect_timeout=1.0, total_timeout=5.0)


def _self_signed(tmp_path, name):
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        support.require(False, "cryptography is needed to make a test certificate")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_https_to_the_resolved_address_with_sni(tmp_path):
    cert_path, key_path = _self_signed(tmp_path, "secure.test")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert_path, key_path)
    sni = []
    server_ctx.sni_callback = lambda sock, name, ctx: sni.append(name)
    hosts = []

    async def page(request):
        hosts.append(request.host)
        return web.Response(text="<html>secure</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
    await site.start()
    port = runner.addresses[0][1]
    client_ctx = ssl.create_default_context(cafile=str(cert_path))
    try:
        async with Fetcher(
            Resolver({"secure.test": "127.0.0.1"}), FAST, AddressPolicy(), verify_tls=client_ctx
        ) as fetcher:
            result = await fetcher.fetch(f"https://secure.test:{port}/")
            assert result.state is NetState.OK
            assert result.body == b"<html>secure</html>"
            assert result.ip == "127.0.0.1"
            assert sni == ["secure.test"]
            assert hosts == [f"secure.test:{port}"]
        # With the system's trust store the self-signed certificate is refused: cErr.
        async with Fetcher(Resolver({"secure.test": "127.0.0.1"}), FAST, AddressPolicy()) as strict:
            refused = await strict.fetch(f"https://secure.test:{port}/")
            assert refused.state is NetState.cErr
            assert "certificate" in refused.error.lower()
    finally:
        await runner.cleanup()


async def test_ca_file_trusts_a_private_ca_besides_the_system_store(tmp_path):
    # --ca-file: the crawl's fetcher (crawl._build.fetcher_of) trusts the PEM file's CA too.
    from dustless.crawl._build import fetcher_of
    from dustless.crawl.config import CrawlConfig

    cert_path, key_path = _self_signed(tmp_path, "secure.test")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert_path, key_path)

    async def page(request):
        return web.Response(text="<html>private</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
    await site.start()
    url = f"https://secure.test:{runner.addresses[0][1]}/"
    config = CrawlConfig(seeds=(url,), resolve=("secure.test:127.0.0.1",))
    try:
        async with fetcher_of(replace(config, ca_file=str(cert_path))) as fetcher:
            result = await fetcher.fetch(url)
            assert result.state is NetState.OK
            assert result.body == b"<html>private</html>"
        async with fetcher_of(config) as without:
            assert (await without.fetch(url)).state is NetState.cErr
    finally:
        await runner.cleanup()


def test_an_unreadable_ca_file_is_one_line_before_anything_starts(tmp_path, capsys):
    from dustless.cli.main import main

    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    for path in (tmp_path / "missing.pem", junk):
        out = tmp_path / "out"
        assert main(["crawl", "http://a.test/", "--out", str(out), "--ca-file", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"dustless crawl: error: --ca-file {path}: ")
        assert "\n" not in err
        assert not out.exists()


def test_a_refused_certificate_is_named_in_the_crawls_progress(tmp_path, capsys):
    # A host whose robots.txt fails on its certificate never reaches a page: no page state
    # says why, and the progress line said "errors: none" until the host was given up.
    from dustless.cli.main import main

    cert_path, key_path = _self_signed(tmp_path, "secure.test")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert_path, key_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"https://secure.test:{server.server_address[1]}/"
    args = ["crawl", url, "--out", str(tmp_path / "c"), "--resolve", "secure.test:127.0.0.1"]
    args += ["--progress-interval", "0.05"]
    try:
        status = main(args)
    finally:
        server.shutdown()
        server.server_close()
    err = capsys.readouterr().err
    assert status == 1  # no seed could be fetched
    assert re.search(r"errors: robots\.txt certificate \d", err)
    assert "errors: none" not in err

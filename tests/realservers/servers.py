"""Real web servers (Debian's nginx, apache2, lighttpd) started by a test as its own processes.

Each runs with a config written here into a temp dir, on a free loopback port, with a short
keep-alive timeout (``KEEP_ALIVE`` seconds) and compression on (Apache's mod_deflate, as on
Debian by default: it hands out ETags ending in ``-gzip"``). The packages' own service
start does not matter: nothing here uses their config files, their ports or systemd.

The pages are real HTML: the libxml2 manual of Debian's ``libxml2-doc`` (``.ci/run``
installs it), copied into a docroot every server's workers can read. Without a server
binary or the pages, a test skips — or fails under ``DUSTLESS_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import support

KEEP_ALIVE = 1  # seconds: the servers' keep-alive timeout, and the crawl's politeness rest
DOCS = Path("/usr/share/doc/libxml2/html")  # libxml2-doc: ~30 top-level real HTML pages
BINARIES = {"nginx": "nginx", "apache": "apache2", "lighttpd": "lighttpd"}


@dataclass(frozen=True)
class Docroot:
    path: Path
    pages: tuple[str, ...]  # paths of the HTML pages, "/intro.html"
    others: tuple[str, ...]  # paths of other documents (XML, XSLT)


def make_docroot(root: Path, n_pages: int, n_others: int) -> Docroot:
    """The first ``n_pages`` HTML pages and ``n_others`` other documents of the libxml2
    manual, and a
    robots.txt whose Crawl-delay is the keep-alive timeout (the common case: the rest meets
    the server's closing of the idle connection)."""
    support.require(DOCS.is_dir(), f"{DOCS} is missing (apt-get install libxml2-doc)")
    html = sorted(p for p in DOCS.glob("*.html") if p.is_file())[:n_pages]
    # Documents that are not HTML, which a crawl stores too: the manual's XML and XSLT.
    others = sorted(p for p in (DOCS / "examples").glob("examples.x*") if p.is_file())[:n_others]
    support.require(len(html) == n_pages, f"fewer than {n_pages} HTML pages in {DOCS}")
    docroot = root / "www"
    docroot.mkdir()
    for src in (*html, *others):
        # The mtime too: Apache makes the ETag of a file changed this second weak.
        shutil.copy2(src, docroot / src.name)
    (docroot / "robots.txt").write_text(f"User-agent: *\nCrawl-delay: {KEEP_ALIVE}\n")
    for path in (root, docroot, *docroot.iterdir()):  # the workers run as nobody when root
        path.chmod(0o755 if path.is_dir() else 0o644)
    return Docroot(docroot, tuple(f"/{p.name}" for p in html), tuple(f"/{p.name}" for p in others))


def _nginx(root: Path, port: int, docroot: Path) -> list[str]:
    user = "user nobody nogroup;" if os.geteuid() == 0 else ""
    conf = root / "nginx.conf"
    conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 64; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path {root}/tmp-body;
    proxy_temp_path {root}/tmp-proxy;
    fastcgi_temp_path {root}/tmp-fastcgi;
    uwsgi_temp_path {root}/tmp-uwsgi;
    scgi_temp_path {root}/tmp-scgi;
    keepalive_timeout {KEEP_ALIVE}s;
    gzip on;
    server {{
        listen 127.0.0.1:{port};
        root {docroot};
    }}
}}
""")
    return ["nginx", "-p", str(root), "-c", str(conf)]


_APACHE_MODULES = ("mpm_event", "authz_core", "dir", "mime", "filter", "deflate")


def _apache(root: Path, port: int, docroot: Path) -> list[str]:
    modules = "\n".join(
        f"LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so" for m in _APACHE_MODULES
    )
    # Apache refuses to run its workers as root: they run as nobody.
    user = "User nobody\nGroup nogroup" if os.geteuid() == 0 else ""
    conf = root / "apache2.conf"
    conf.write_text(f"""
ServerRoot {root}
ServerName localhost
Listen 127.0.0.1:{port}
PidFile {root}/apache2.pid
ErrorLog {root}/error.log
Mutex file:{root} default
{modules}
{user}
KeepAlive On
KeepAliveTimeout {KEEP_ALIVE}
StartServers 1
TypesConfig /etc/mime.types
DocumentRoot {docroot}
<Directory {docroot}>
    Require all granted
</Directory>
# Debian's default: compress text; the ETag then ends in -gzip (DeflateAlterETag AddSuffix)
AddOutputFilterByType DEFLATE text/html text/plain text/xml application/xml
""")
    return ["apache2", "-f", str(conf), "-DFOREGROUND"]


def _lighttpd(root: Path, port: int, docroot: Path) -> list[str]:
    user = 'server.username = "nobody"\nserver.groupname = "nogroup"' if os.geteuid() == 0 else ""
    conf = root / "lighttpd.conf"
    conf.write_text(f"""
server.modules = ("mod_deflate")
server.document-root = "{docroot}"
server.bind = "127.0.0.1"
server.port = {port}
{user}
server.max-keep-alive-idle = {KEEP_ALIVE}
index-file.names = ("index.html")
include_shell "/usr/share/lighttpd/create-mime.conf.pl"
deflate.mimetypes = ("text/html", "text/plain", "text/xml", "application/xml")
deflate.allowed-encodings = ("gzip", "deflate")
""")
    return ["lighttpd", "-D", "-f", str(conf)]


_CONFIGS = {"nginx": _nginx, "apache": _apache, "lighttpd": _lighttpd}


@dataclass(frozen=True)
class RealServer:
    name: str  # nginx, apache, lighttpd
    port: int
    root: Path

    def log(self) -> str:
        path = self.root / "error.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def _wait_listening(proc: subprocess.Popen[bytes], port: int, name: str, root: Path) -> None:
    # An external process has no event to await: look until it listens, with a deadline
    # generous for a loaded machine. The server itself must hold the socket: a connection
    # could reach whoever took the port before it (support.listens).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            log = (root / "error.log").read_text() if (root / "error.log").exists() else ""
            raise AssertionError(f"{name} exited {proc.returncode}: {out[-1500:]} {log[-1500:]}")
        if support.listens(proc.pid, port):
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} did not listen on {port} within 30 s")


@contextlib.contextmanager
def running(name: str, docroot: Path) -> Iterator[RealServer]:
    """Server ``name`` serving ``docroot`` on a free loopback port, stopped at the end."""
    binary = BINARIES[name]
    support.require(
        shutil.which(binary) or Path("/usr/sbin", binary).exists(),
        f"{binary} is not installed (apt-get install {binary})",
    )
    root = Path(tempfile.mkdtemp(prefix=f"dustless-{name}-"))
    root.chmod(0o755)
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    try:
        for attempt in range(support.PORT_TRIES):
            port = support.free_port()
            command = _CONFIGS[name](root, port, docroot)
            proc = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=root,
                env={**os.environ, "PATH": path},
                start_new_session=True,
            )
            try:
                _wait_listening(proc, port, name, root)
                break
            except AssertionError as exc:
                _stop(proc)
                # The other test worker took the port between our pick and the server's
                # bind: start again on another one (support.free_port).
                if attempt + 1 == support.PORT_TRIES or not support.address_in_use(str(exc)):
                    raise
                (root / "error.log").unlink(missing_ok=True)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        yield RealServer(name, port, root)
    finally:
        _stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()

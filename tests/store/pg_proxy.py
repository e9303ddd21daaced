"""A TCP forwarder on 127.0.0.1 between a worker and the session's PostgreSQL, that a test
cuts and restores: the DB "goes away" for one worker only, at a moment the test chooses.

``cut()``: every connection through it is closed at once (no FATAL message: the client
finds out when it next speaks) and new ones are accepted and closed (the client's connect
fails at once). ``lose_next_answer()``: what the client sends next is forwarded, the
server's answer is dropped up to its ReadyForQuery (the transaction is committed by then),
and then it cuts — a commit whose answer was lost. ``restore()``: connections go through
again. Threads, not asyncio: the crawl under test runs its own event loop.
"""

from __future__ import annotations

import contextlib
import socket
import threading

__all__ = ["PgProxy"]

# ReadyForQuery, idle: the server's last word after a Sync (the protocol's message 'Z').
_READY = b"Z\x00\x00\x00\x05I"


class PgProxy:
    def __init__(self, dsn: str) -> None:
        rest = dsn.split("@", 1)[1]
        hostport, self._db = rest.split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self._upstream = (host, int(port))
        self._user = dsn.split("//", 1)[1].split("@", 1)[0]
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._socks: set[socket.socket] = set()
        self._refusing = False
        self._lose = False
        self.answers_lost = threading.Event()  # a lost answer's transaction went through
        self.refused = 0  # connections refused while cut
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def dsn(self) -> str:
        return f"postgresql://{self._user}@127.0.0.1:{self.port}/{self._db}"

    def cut(self) -> None:
        with self._lock:
            self._refusing = True
            socks, self._socks = self._socks, set()
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def restore(self) -> None:
        with self._lock:
            self._refusing = False
            self._lose = False

    def lose_next_answer(self) -> None:
        with self._lock:
            self._lose = True

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refusing = self._refusing
            if refusing:
                self.refused += 1
                client.close()
                continue
            try:
                server = socket.create_connection(self._upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._socks.update((client, server))
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, answers: bool) -> None:
        dropping = False
        tail = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if answers:
                    with self._lock:
                        if self._lose:
                            dropping, self._lose = True, False
                    if dropping:
                        seen = tail + data
                        if _READY in seen:
                            self.answers_lost.set()
                            self.cut()
                            return
                        tail = seen[-len(_READY) :]
                        continue
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

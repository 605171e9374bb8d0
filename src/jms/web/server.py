"""``HttpServer``: one aiohttp HTTP port in front of a started ``StompServer``.

``HttpServer(stomp, host, port)`` serves (over TLS with ``ssl_context``: HTTPS and WSS) ``/stomp`` (STOMP over WebSocket, ``jms.web.websocket``),
``/metrics`` (``jms.stomp.metrics``) and the web console (``/`` and its ``/api``,
``jms.web.console``); ``allowed_origins`` are the other sites whose pages may open ``/stomp``
(``jms.web.websocket.serve_stomp``). ``HttpServer(stomp, host, port, console=False)`` serves ``/metrics``
alone: what ``jms broker --metrics-port`` runs; ``HttpServer(None, host, port, console=False)``
serves a standby broker's ``/metrics`` (``jms_broker_standby`` 1) while it waits for its store. Closing it ends its WebSocket connections (their
STOMP connections are the ``StompServer``'s, closed with it) and the console's broker connection.
"""

from __future__ import annotations

import ssl
from importlib.resources import files
from typing import Final

from aiohttp import web

from jms.errors import IllegalStateException
from jms.stomp.metrics import PROMETHEUS_CONTENT_TYPE, prometheus_text
from jms.stomp.server import StompServer
from jms.web.console import ConsoleApi
from jms.web.websocket import serve_stomp

__all__ = ["HttpServer"]

_STATIC: Final = files("jms.web").joinpath("static")
_CONSOLE_PAGE: Final = _STATIC.joinpath("console.html")
_CONSOLE_SCRIPT: Final = _STATIC.joinpath("console.js")
# The page runs its own script only, talks to this origin only, and is never framed.
_CONSOLE_POLICY: Final = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "frame-ancestors 'none'"
)
_SHUTDOWN_TIMEOUT_S: Final = 5.0


class HttpServer:
    """See the module docstring. ``port`` 0 picks a free port; ``url`` is where it listens."""

    def __init__(
        self,
        stomp: StompServer | None,
        host: str,
        port: int,
        *,
        console: bool = True,
        allowed_origins: tuple[str, ...] = (),
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._stomp = stomp
        self._ssl_context = ssl_context
        self._allowed_origins = frozenset(allowed_origins)
        self.host = host
        self._requested_port = port
        if console and stomp is None:
            raise IllegalStateException("a standby's HttpServer serves /metrics only")
        self._console = ConsoleApi(stomp) if console and stomp is not None else None
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None

    def _app(self) -> web.Application:
        if self._console is None:
            app = web.Application()
            app.router.add_get("/metrics", self._metrics)
            return app
        app = web.Application(middlewares=[self._console.guard])
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/stomp", self._stomp_socket)
        app.router.add_get("/", self._page)
        app.router.add_get("/static/console.js", self._script)
        app.router.add_routes(self._console.routes())
        return app

    async def start(self) -> None:
        """Bind and serve; returns once the port is bound."""
        if self._runner is not None:
            raise IllegalStateException("this HttpServer is already started")
        runner = web.AppRunner(
            self._app(), access_log=None, shutdown_timeout=_SHUTDOWN_TIMEOUT_S, handle_signals=False
        )
        if self._console is not None:
            await self._console.start()
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._requested_port, ssl_context=self._ssl_context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            if self._console is not None:
                await self._console.close()
            raise
        self._runner, self._site = runner, site

    @property
    def port(self) -> int:
        if self._runner is None or not self._runner.addresses:
            raise IllegalStateException("the HTTP server is not listening")
        return int(self._runner.addresses[0][1])

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (``https://`` with TLS): the console at ``/``, metrics at
        ``/metrics``."""
        scheme = "http" if self._ssl_context is None else "https"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def websocket_url(self) -> str:
        scheme = "ws" if self._ssl_context is None else "wss"
        return f"{scheme}://{self.host}:{self.port}/stomp"

    async def close(self) -> None:
        if self._runner is None:
            return
        runner, self._runner, self._site = self._runner, None, None
        if self._console is not None:
            await self._console.close()
        await runner.cleanup()

    async def _metrics(self, request: web.Request) -> web.Response:
        response = web.Response(body=prometheus_text(self._stomp))
        response.headers["Content-Type"] = PROMETHEUS_CONTENT_TYPE
        return response

    async def _stomp_socket(self, request: web.Request) -> web.StreamResponse:
        assert self._stomp is not None  # only a console's app routes /stomp here
        return await serve_stomp(request, self._stomp, self._allowed_origins)

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(
            text=_CONSOLE_PAGE.read_text("utf-8"),
            content_type="text/html",
            headers={"Content-Security-Policy": _CONSOLE_POLICY, "X-Frame-Options": "DENY"},
        )

    async def _script(self, request: web.Request) -> web.Response:
        return web.Response(
            text=_CONSOLE_SCRIPT.read_text("utf-8"), content_type="application/javascript"
        )

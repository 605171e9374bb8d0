"""Where the external peers of the HTTP tests are, or why a test must skip: Node with the npm
packages of tests/js (``npm ci`` there, as .ci/run does), and Debian's Chromium with Playwright."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

__all__ = ["CHROMIUM_ARGUMENTS", "JS_DIRECTORY", "chromium_path", "node_path", "stompjs_bundle"]

JS_DIRECTORY = Path(__file__).resolve().parent.parent / "js"
#: Chromium quiet and self-contained: no sandbox (CI runs as root), no GPU, no calls home.
#: Playwright adds --headless and a fresh --user-data-dir of its own.
CHROMIUM_ARGUMENTS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def node_path() -> str:
    """The ``node`` executable with tests/js/node_modules installed; skips, saying why, without."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (apt-get install nodejs npm)")
    if not (JS_DIRECTORY / "node_modules" / "@stomp" / "stompjs").is_dir():
        pytest.skip(f"the npm packages are not installed: run npm ci in {JS_DIRECTORY}")
    return node


def stompjs_bundle() -> Path:
    """The browser bundle of @stomp/stompjs from tests/js; skips, saying why, without it."""
    bundle = JS_DIRECTORY / "node_modules" / "@stomp" / "stompjs" / "bundles" / "stomp.umd.min.js"
    if not bundle.is_file():
        pytest.skip(f"the npm packages are not installed: run npm ci in {JS_DIRECTORY}")
    return bundle


def chromium_path() -> str:
    """Debian's Chromium, with Playwright importable; skips, saying why, without."""
    pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return chromium

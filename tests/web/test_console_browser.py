"""The web console and STOMP over WebSocket in a real headless Chromium (Debian's, driven by
Playwright) against ``jms broker --http-port`` processes: the console lists a queue after
messages are sent, browses it with a selector (and shows a bad one's error), moves a dead letter
back, and refuses a user without admin permission; a page using @stomp/stompjs shows a message
it received."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jms import ConnectionFactory, Queue, TextMessage
from jms.broker.security import hash_password
from tests.certificates import make_certificates
from tests.stomp.serving import broker_process, stop_process
from tests.web.peers import CHROMIUM_ARGUMENTS, chromium_path, stompjs_bundle

_TIMEOUT_MS = 15_000


@contextmanager
def _browser() -> Iterator[Any]:
    chromium = chromium_path()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=_TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGUMENTS)
        try:
            yield browser
        finally:
            browser.close()


def _urls(line: str) -> tuple[str, str, str]:
    stomp = re.search(r"stomp://\S+", line)
    console = re.search(r"console: (http://\S+)/", line)
    websocket = re.search(r"websocket: (ws://\S+)", line)
    assert stomp and console and websocket, line
    return stomp.group(0), console.group(1), websocket.group(1)


def test_the_console_lists_browses_and_moves_a_dead_letter_back(tmp_path: Path) -> None:
    with (
        _browser() as browser,
        broker_process("--memory", "--port", "0", "--http-port", "0") as (
            process,
            line,
        ),
    ):
        from playwright.sync_api import expect

        stomp, console, _ = _urls(line)
        with ConnectionFactory(stomp).create_connection() as connection:
            session = connection.create_session()
            orders = session.create_producer(Queue("orders"))
            for weight in (1, 2, 3):
                order = TextMessage(f"order {weight}")
                order.set_int_property("weight", weight)
                orders.send(order)
            dead = TextMessage("returned order")
            dead.set_string_property("JMS_jms_OriginalDestination", "queue://orders")
            session.create_producer(Queue("DLQ.orders")).send(dead)
        page = browser.new_page(viewport={"width": 1200, "height": 760})
        page.set_default_timeout(_TIMEOUT_MS)
        page.goto(console + "/")
        orders_row = page.locator('tr[data-name="queue://orders"]')
        expect(orders_row.locator("td").nth(2)).to_have_text("3")  # depth
        dead_row = page.locator('tr[data-name="queue://DLQ.orders"]')
        expect(dead_row).to_contain_text("dead letters")
        orders_row.click()
        page.fill("#selector", "weight >= 2")
        page.click("#browse")
        messages = page.locator("#messages details")
        expect(messages).to_have_count(2)
        messages.first.locator("summary").click()
        expect(messages.first).to_contain_text("order 2")
        expect(messages.first).to_contain_text("weight")
        page.fill("#selector", "weight >=")
        page.click("#browse")
        expect(page.locator("#error-selector")).to_contain_text("weight >=")
        dead_row.click()
        expect(messages).to_have_count(1)
        messages.first.get_by_role("button", name="Move back").click()
        expect(page.locator("#action-result")).to_contain_text("moved 1 back")
        expect(orders_row.locator("td").nth(2)).to_have_text("4")  # the table updates by itself
        expect(dead_row.locator("td").nth(2)).to_have_text("0")
        page.locator('tr[data-name="queue://orders"]').click()
        page.fill("#selector", "")
        page.click("#browse")
        expect(messages).to_have_count(4)
        screenshot = tmp_path / "console.png"
        page.screenshot(path=str(screenshot))
        assert screenshot.read_bytes().startswith(b"\x89PNG")
        code, _ = stop_process(process)
    assert code == 0


def test_the_console_refuses_a_user_without_admin_permission(tmp_path: Path) -> None:
    config = tmp_path / "broker.toml"
    config.write_text(
        f'[users.alice]\npassword = "{hash_password("a")}"\n'
        f'[users.bob]\npassword = "{hash_password("b")}"\n'
        '[[permissions]]\ndestination = "*"\nadmin = ["alice"]\nsend = ["alice", "bob"]\n'
    )
    arguments = ("--memory", "--port", "0", "--http-port", "0", "--config", str(config))
    with _browser() as browser, broker_process(*arguments) as (process, line):
        from playwright.sync_api import expect

        _, console, _ = _urls(line)
        bob = browser.new_context(http_credentials={"username": "bob", "password": "b"})
        response = bob.new_page().goto(console + "/")
        assert response is not None and response.status == 403
        assert "user 'bob' has no admin permission" in response.text()
        alice = browser.new_context(http_credentials={"username": "alice", "password": "a"})
        page = alice.new_page()
        page.goto(console + "/")
        expect(page.locator("#user")).to_have_text("signed in as alice")
        page.fill("#send-destination", "queue://orders")
        page.fill("#send-properties", "weight=int:heavy")
        page.click("#send-form button[type=submit]")
        expect(page.locator("#error-properties")).to_contain_text("'weight=int:heavy'")
        page.fill("#send-properties", "weight=int:7")
        page.fill("#send-body", "from the console")
        page.click("#send-form button[type=submit]")
        expect(page.locator("#send-result")).to_contain_text("sent ID:console-")
        expect(page.locator('tr[data-name="queue://orders"] td').nth(2)).to_have_text("1")
        code, _ = stop_process(process)
    assert code == 0


def test_a_page_with_stompjs_shows_a_message_it_received() -> None:
    bundle = stompjs_bundle()
    with (
        _browser() as browser,
        broker_process("--memory", "--port", "0", "--http-port", "0") as (
            process,
            line,
        ),
    ):
        from playwright.sync_api import expect

        stomp, console, websocket = _urls(line)
        page = browser.new_page()
        page.set_default_timeout(_TIMEOUT_MS)
        page.goto(console + "/metrics")  # a page of the broker's own origin, rewritten
        page.set_content('<p id="received">nothing yet</p>')
        page.add_script_tag(path=str(bundle))
        page.evaluate(
            """url => {
                const client = new StompJs.Client({ brokerURL: url, reconnectDelay: 0 });
                client.onConnect = () => {
                    client.subscribe("/queue/browser", message => {
                        document.getElementById("received").textContent =
                            `${message.body} (${message.headers.colour})`;
                    });
                };
                client.activate();
            }""",
            websocket,
        )
        with ConnectionFactory(stomp).create_connection() as connection:
            message = TextMessage("hello, browser")
            message.set_string_property("colour", "green")
            connection.create_session().create_producer(Queue("browser")).send(message)
        expect(page.locator("#received")).to_have_text("hello, browser (green)")
        code, _ = stop_process(process)
    assert code == 0


def test_the_console_and_stompjs_work_over_https_and_wss(tmp_path: Path) -> None:
    # The broker's certificate comes from a throwaway CA the browser does not know: this test
    # alone tells Chromium to accept it (ignore_https_errors), as a browser told to trust it would.
    certificates = make_certificates(tmp_path)
    arguments = ["--memory", "--port", "0", "--http-port", "0", "--tls-port", "0"]
    arguments += ["--tls-cert", str(certificates.server_cert)]
    arguments += ["--tls-key", str(certificates.server_key)]
    with _browser() as browser, broker_process(*arguments) as (process, line):
        from playwright.sync_api import expect

        stomp = re.search(r"stomp://\S+", line)
        console = re.search(r"console: (https://\S+)/", line)
        websocket = re.search(r"websocket: (wss://\S+)", line)
        assert stomp and console and websocket, line
        with ConnectionFactory(stomp.group(0)).create_connection() as connection:
            connection.create_session().create_producer(Queue("secure")).send(TextMessage("x"))
        context = browser.new_context(ignore_https_errors=True)
        page = context.new_page()
        page.set_default_timeout(_TIMEOUT_MS)
        page.goto(console.group(1) + "/")
        expect(page.locator('tr[data-name="queue://secure"] td').nth(2)).to_have_text("1")
        page.goto(console.group(1) + "/metrics")
        page.set_content('<p id="received">nothing yet</p>')
        page.add_script_tag(path=str(stompjs_bundle()))
        page.evaluate(
            """url => {
                const client = new StompJs.Client({ brokerURL: url, reconnectDelay: 0 });
                client.onConnect = () => {
                    client.subscribe("/queue/secure", message => {
                        document.getElementById("received").textContent = message.body;
                    });
                };
                client.activate();
            }""",
            websocket.group(1),
        )
        expect(page.locator("#received")).to_have_text("x")
        code, _ = stop_process(process)
    assert code == 0

"""``@stomp/stompjs`` over the ``ws`` package in Node, as browser applications speak STOMP, against
``jms broker --http-port`` at ``/stomp``: send, selector subscribe, client-individual ack,
receipts and a transaction (tests/js/stompjs_websocket.mjs)."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request

from tests.stomp.serving import broker_process, stop_process
from tests.web.peers import JS_DIRECTORY, node_path


def test_stompjs_sends_subscribes_with_a_selector_acknowledges_and_commits() -> None:
    node = node_path()
    with broker_process("--memory", "--port", "0", "--http-port", "0") as (process, line):
        websocket = re.search(r"websocket: (ws://\S+/stomp)", line)
        console = re.search(r"console: (http://\S+)/", line)
        assert websocket and console, line
        run = subprocess.run(
            [node, str(JS_DIRECTORY / "stompjs_websocket.mjs"), websocket.group(1)],
            cwd=JS_DIRECTORY,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        assert seen["version"] == "1.2" and seen["server"].startswith("jms/")
        assert [m["body"] for m in seen["received"]] == ["red one", "committed red"]
        assert all(m["color"] == "red" for m in seen["received"])
        with urllib.request.urlopen(console.group(1) + "/metrics", timeout=10) as response:
            metrics = response.read().decode()
        # The blue one stays (no subscriber matched it); the acknowledged red ones are gone.
        assert 'jms_queue_depth{destination="queue://orders",queue="queue://orders"} 1.0' in metrics
        assert (
            'jms_queue_acknowledged_total{destination="queue://orders",queue="queue://orders"} 2.0'
            in metrics
        )
        assert 'jms_stomp_frames_received_total{command="ABORT"} 1.0' in metrics
        code, _ = stop_process(process)
    assert code == 0

"""The ``py`` blocks of docs/spark.md (the data source's snippets, which need a broker) run, in
order, in one namespace holding ``spark`` and ``url`` — a broker served over STOMP whose
``queue://orders`` holds a few orders — and do what the page says they do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jms.client import ConnectionFactory
from jms.message import Queue
from tests.spark.served_broker import ServedStore

PAGE = Path(__file__).parents[2] / "docs" / "spark.md"


@pytest.mark.spark
def test_the_data_source_snippets_of_the_spark_page_run(
    spark: SparkSession, tmp_path: Path
) -> None:
    blocks = re.findall(r"```py\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks
    with (
        ServedStore(tmp_path / "store") as served,
        ConnectionFactory(served.url).create_connection() as connection,
    ):
        session = connection.create_session()
        producer = session.create_producer(Queue("orders"))
        for number in range(12):
            message = session.create_text_message(f"order {number}")
            message.set_string_property("region", "eu" if number % 2 else "us")
            producer.send(message, priority=number % 10)
        namespace: dict[str, object] = {"spark": spark, "url": served.url}
        for block in blocks:
            exec(compile(block, str(PAGE), "exec"), namespace)
        urgent = session.create_browser(Queue("orders.urgent"))
        assert sorted(m.get_text() for m in urgent) == ["order 7", "order 9"]
        (greeting,) = list(session.create_browser(Queue("greetings")))
        assert greeting.get_text() == "hello" and greeting.get_int_property("qty") == 7
        assert len(list(session.create_browser(Queue("orders")))) == 12

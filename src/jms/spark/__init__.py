"""The Spark back end: messages as DataFrame rows, and selectors as native Spark SQL columns.

``MESSAGE_SCHEMA`` is the one row layout of a message (docs/spark.md describes each column);
``to_dataframe``/``from_rows`` convert losslessly both ways, through Arrow, and
``encoded_to_arrow`` reads codec bytes straight into the same Arrow layout; ``selector_to_column``
turns a JMS selector into a ``pyspark.sql.Column`` that keeps exactly the rows
``Selector(text).matches`` keeps; ``register(spark)`` adds the data source ``format("jms")``
(batch and streaming reads of destinations by offset range, transactional writes; docs/spark.md);
``worker_python()`` names the interpreter to give Spark's Python workers (``PYSPARK_PYTHON``).
This package needs pyspark, pyarrow and numpy; it reaches a broker only through ``jms.client``
(or reads a store directory read-only), and it must never evaluate a selector in Python on a Spark
executor (the broker evaluates the ``selector`` option).
"""

from jms.spark.version import require_pyspark

require_pyspark()

from jms.spark.columnar import encoded_to_arrow  # noqa: E402
from jms.spark.datasource import JmsDataSource, register  # noqa: E402
from jms.spark.rows import MESSAGE_ARROW_SCHEMA, from_rows, to_arrow, to_dataframe  # noqa: E402
from jms.spark.schema import BODY_VALUE, MESSAGE_SCHEMA, PROPERTY_VALUE  # noqa: E402
from jms.spark.selector_column import selector_to_column  # noqa: E402
from jms.spark.workers import worker_python  # noqa: E402

__all__ = [
    "BODY_VALUE",
    "MESSAGE_ARROW_SCHEMA",
    "MESSAGE_SCHEMA",
    "PROPERTY_VALUE",
    "JmsDataSource",
    "encoded_to_arrow",
    "from_rows",
    "register",
    "selector_to_column",
    "to_arrow",
    "to_dataframe",
    "worker_python",
]

"""The ``publish_staged`` tests of ``tests/client`` over STOMP: ``/admin/publish-staged``
answered in its RECEIPT (docs/stomp.md, "Staged publishing")."""

from tests.client.test_publish_staged import *  # noqa: F403

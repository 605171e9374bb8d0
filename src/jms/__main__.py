"""``python -m jms``: the ``jms`` command."""

import sys

from jms.cli import main

sys.argv[0] = "jms"  # usage lines say `jms`, as the installed command does
main()

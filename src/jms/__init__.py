"""jms: Jakarta Messaging in Python."""

__version__ = "0.1.0"

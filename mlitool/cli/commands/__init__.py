"""The six commands, one module each, registered on the app in the order --help lists them:
inspect, convert, run, verify, report, tune; `common` holds what they share. Each command parses its
options, calls one function and renders; it imports its heavy modules inside, so that --help
stays fast."""

from mlitool.cli.app import app

# The import order is the order of the commands in --help.
# isort: off
from mlitool.cli.commands import inspect, convert, run, verify, report, tune  # noqa: F401
# isort: on

__all__ = ["app"]

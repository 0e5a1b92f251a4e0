"""Option groups: options several commands take together (the build, the samples, the
thresholds, the output), declared once.

Typer builds a command's options from its signature and has no groups. A command parameter
whose default is a `Group` stands for the group's options: `@grouped` puts them in its place in
the signature typer reads (so --help lists them there) and passes them to the command as one
`types.SimpleNamespace`, by the option's parameter name (`build.target`, `output.as_json`).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any


@dataclass(frozen=True)
class Group:
    """Options declared once: (parameter name, annotation, default) each."""

    options: tuple[tuple[str, Any, Any], ...]

    def with_defaults(self, **defaults) -> Group:
        """The same options, some with another default (e.g. how many samples)."""
        unknown = set(defaults) - {name for name, _, _ in self.options}
        assert not unknown, f"no such option in the group: {sorted(unknown)}"
        return Group(tuple((n, a, defaults.get(n, d)) for n, a, d in self.options))

    def without(self, *names: str) -> Group:
        """The other options (a command that does not take these)."""
        return Group(tuple(o for o in self.options if o[0] not in names))


def grouped(command):
    """`command` with each parameter that defaults to a `Group` expanded into its options."""
    signature = inspect.signature(command, eval_str=True)
    groups: dict[str, Group] = {}
    params: list[inspect.Parameter] = []
    for p in signature.parameters.values():
        if not isinstance(p.default, Group):
            params.append(p)
            continue
        groups[p.name] = p.default
        params += [
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d, annotation=a)
            for n, a, d in p.default.options
        ]

    @functools.wraps(command)
    def run(**values):
        for name, group in groups.items():
            values[name] = SimpleNamespace(**{n: values.pop(n) for n, _, _ in group.options})
        return command(**values)

    del run.__wrapped__  # typer must read the expanded signature, not the command's
    run.__signature__ = signature.replace(parameters=params)
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run

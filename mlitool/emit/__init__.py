"""C emitter: an `MliModel` -> NAME.h, NAME.c and NAME.json (see `writer.emit`)."""

from mlitool.emit.writer import emit

__all__ = ["emit"]

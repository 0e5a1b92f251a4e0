"""C emitter: an `MliModel` -> NAME.h, NAME.c and NAME.json (`writer.emit`)."""

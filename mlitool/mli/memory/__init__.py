"""The memory plan of an MLI model: the activation arena (`arena.py`: lifetimes and placement), and
with `--fast-memory` which buffers live in the fast buffer (`placement.py`), what each layer stages
there and the bytes it moves (`staging.py`), row tiles and channel slices of the layers that do not
fit (`tiling.py`). One plan, read by the emitter, the executor and the reports."""

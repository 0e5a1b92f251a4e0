"""Samples in batches, on every core: one process pool for run, verify and report.

Each worker receives the job's context once (`initializer`), then batch ranges; results come back
in batch order, so `--jobs N` gives exactly what `--jobs 1` gives (statistics are merged batch by
batch in the same order as one process adds them). `--jobs 1` runs in this process.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator
from typing import Any

from mlitool.errors import OptionError

_context: dict[str, Any] = {}


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def check_jobs(jobs: int | None) -> int:
    if jobs is None:
        return default_jobs()
    if jobs < 1:
        raise OptionError(f"--jobs {jobs}: give at least 1")
    return jobs


MAX_BATCH = 16
STREAM_BATCH = 1 << 30  # a model that keeps state between samples (SVDF) runs them in one batch
# Activation elements one batch may hold: verify keeps every layer's output in three modes, about
# 15 bytes an element measured, so a batch stays near 0.5 GB (224x224 MobileNetV2: 4 samples).
BATCH_ELEMENTS = 32_000_000


def batch_size(graph, requested: int | None = None) -> int:
    """Samples per batch: `requested`, else as many as keep every activation of the batch within
    BATCH_ELEMENTS (at most MAX_BATCH); a model whose ops keep state between samples
    (`ir.Graph.is_stream`) all in one. Depends on the model only, so figures do not depend on
    --jobs."""
    if requested is not None:
        if requested < 1:
            raise OptionError(f"batch {requested}: give at least 1")
        return requested
    if getattr(graph, "is_stream", False):  # one stream: a batch would restart it
        return STREAM_BATCH
    per_sample = sum(math.prod(t.shape) for t in graph.tensors if not t.is_constant)
    return max(1, min(MAX_BATCH, BATCH_ELEMENTS // max(1, per_sample)))


def batch_ranges(n: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def _install(context: dict[str, Any]) -> None:
    """Give this process the job's context. A worker is a fresh interpreter, an entry point of
    its own: the context's `setup` (a module-level callable, e.g. loading the op families as the
    main process's entry point did) runs first."""
    setup = context.get("setup")
    if setup is not None:
        setup()
    _context.clear()
    _context.update(context)


def context() -> dict[str, Any]:
    """The context of the job this worker runs (see `map_batches`)."""
    return _context


def map_batches(
    fn: Callable[[int, int], Any],
    n: int,
    size: int,
    jobs: int,
    job_context: dict[str, Any],
    samples_key: str | None = None,
) -> Iterator[Any]:
    """fn(start, stop) for every batch of `n` samples, in order; `fn` reads `context()`, where
    `samples_key` names {key: array with a leading sample axis} that fn slices [start:stop].
    With more than one job and batch, batches run in worker processes (fn must be
    module-level), a few at a time, and each worker receives only its batches' samples, so
    memory does not grow with the number of samples."""
    ranges = batch_ranges(n, size)
    if jobs <= 1 or len(ranges) <= 1:
        _install(job_context)
        for start, stop in ranges:
            yield fn(start, stop)
        return
    shared = {k: v for k, v in job_context.items() if k != samples_key}
    samples = job_context.get(samples_key, {})
    # Fresh interpreters (they inherit the one-thread BLAS environment, see below).
    # Imported here: the CLI imports this module at start-up (one_blas_thread).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(
        max_workers=min(jobs, len(ranges)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_install,
        initargs=(shared,),
    ) as pool:
        import numpy as np  # not at import: one_blas_thread() comes first

        def submit(start: int, stop: int):
            batch = {k: np.ascontiguousarray(v[start:stop]) for k, v in samples.items()}
            return pool.submit(_with_samples, fn, samples_key, batch, stop - start)

        ahead = 2 * jobs  # batches in flight: bounded, in order
        pending = [submit(*r) for r in ranges[:ahead]]
        for k in range(len(ranges)):
            result = pending[k].result()
            pending[k] = None  # drop the finished batch's result
            if k + ahead < len(ranges):
                pending.append(submit(*ranges[k + ahead]))
            yield result


@contextlib.contextmanager
def task_pool(jobs: int, job_context: dict[str, Any]) -> Iterator[Callable]:
    """`run(fn, tasks)`: fn(task) for every task, results in task order; in this process with
    one job, else over `jobs` worker processes kept for the pool's life (each receives
    `job_context` once, read by fn through `context()`). Each task runs whole in one process,
    so results do not depend on `jobs`."""
    if jobs <= 1:
        _install(job_context)
        yield lambda fn, tasks: map(fn, tasks)
        return
    import multiprocessing  # here, not at start-up (as in batches)
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_install,
        initargs=(job_context,),
    ) as pool:
        yield lambda fn, tasks: pool.map(fn, tasks)


def _with_samples(fn: Callable[[int, int], Any], key: str | None, batch: dict, count: int):
    """In a worker: fn over one batch whose samples were sent with it (indices 0..count)."""
    if key is not None:
        _context[key] = batch
    return fn(0, count)


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """Make numpy's BLAS single-threaded in this process and its workers (before numpy loads).
    Float sums in a BLAS call depend on its thread count, so this is what makes --jobs N give
    exactly the figures of --jobs 1; the cores go to --jobs instead. A user's own setting wins."""
    for k in _BLAS_THREADS:
        os.environ.setdefault(k, "1")

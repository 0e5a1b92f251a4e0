"""Sliding-window geometry shared by the convolution and pooling kernels (HWC activations).

MLI computes output pixel (oh, ow) from input rows `oh*stride - pad_top + k*dilation` (likewise for
columns) and skips taps that fall outside the input. The right/bottom padding in the config does not
matter: MLI recomputes it from the output size, so a smaller output ("out_cropped") simply is the
top-left part of the full result.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Window:
    kernel: tuple[int, int]  # (Kh, Kw)
    stride: tuple[int, int]  # (Sh, Sw)
    dilation: tuple[int, int]  # (Dh, Dw)
    pad: tuple[int, int]  # (top, left); bottom/right follow from the output size
    out: tuple[int, int]  # (Ho, Wo)

    @classmethod
    def from_cfg(cls, cfg: dict, kernel: tuple[int, int], out_shape: tuple[int, ...]) -> "Window":
        return cls(
            kernel=(int(kernel[0]), int(kernel[1])),
            stride=(int(cfg.get("stride_height", 1)), int(cfg.get("stride_width", 1))),
            dilation=(
                int(cfg.get("dilation_height", 1) or 1),
                int(cfg.get("dilation_width", 1) or 1),
            ),
            pad=(int(cfg.get("padding_top", 0)), int(cfg.get("padding_left", 0))),
            out=(int(out_shape[0]), int(out_shape[1])),
        )

    def span(self, axis: int) -> int:
        """Input extent (padded coordinates) that the output needs along axis 0 (H) or 1 (W)."""
        return (
            (self.out[axis] - 1) * self.stride[axis]
            + (self.kernel[axis] - 1) * self.dilation[axis]
            + 1
        )

    def pad_input(self, x: np.ndarray, fill) -> np.ndarray:
        """(B, H, W, C) -> (B, span_h, span_w, C): x placed at (pad_top, pad_left), `fill` around it."""
        b, h, w, c = x.shape
        sh, sw = self.span(0), self.span(1)
        pt, pl = self.pad
        rows, cols = max(0, min(h, sh - pt)), max(0, min(w, sw - pl))
        if (pt, pl, rows, cols) == (0, 0, sh, sw):
            return x[:, :sh, :sw, :]
        xp = np.empty((b, sh, sw, c), dtype=x.dtype)
        xp[:, :pt] = fill  # the border only: the inside is copied over once
        xp[:, pt + rows :] = fill
        xp[:, pt : pt + rows, :pl] = fill
        xp[:, pt : pt + rows, pl + cols :] = fill
        xp[:, pt : pt + rows, pl : pl + cols, :] = x[:, :rows, :cols, :]
        return xp

    def taps(self, xp: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
        """(kh, kw, view (B, Ho, Wo, C)) for every kernel tap of a `pad_input` result."""
        (kh_n, kw_n), (sh, sw), (dh, dw), (ho, wo) = (
            self.kernel,
            self.stride,
            self.dilation,
            self.out,
        )
        for kh in range(kh_n):
            for kw in range(kw_n):
                yield (
                    kh,
                    kw,
                    xp[
                        :,
                        kh * dh : kh * dh + (ho - 1) * sh + 1 : sh,
                        kw * dw : kw * dw + (wo - 1) * sw + 1 : sw,
                        :,
                    ],
                )

    def valid_counts(self, in_hw: tuple[int, int]) -> np.ndarray:
        """(Ho, Wo): number of taps of each window that fall inside the input."""
        counts = []
        for axis in (0, 1):
            start = np.arange(self.out[axis]) * self.stride[axis] - self.pad[axis]
            pos = start[:, None] + np.arange(self.kernel[axis])[None, :] * self.dilation[axis]
            counts.append(((pos >= 0) & (pos < in_hw[axis])).sum(axis=1))
        return counts[0][:, None] * counts[1][None, :]

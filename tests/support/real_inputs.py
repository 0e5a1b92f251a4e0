"""Real inputs of ../shared/models/inputs and what the interpreter classifies them as.

`cifar10_test20`: 20 real CIFAR-10 test images with their labels. The TFLite interpreter's
classes (../shared/models/README.md) for resnet8_int8 (fed int8(pixel - 128)) and resnet8_float
(fed the raw pixels as float32) are RESNET8_CLASSES: 19 of the 20 labels; image 4, an airplane
(label 0), is taken for a bird (class 2).
"""

from __future__ import annotations

import numpy as np

from tests.support.paths import shared_path

RESNET8_CLASSES = [3, 5, 7, 7, 2, 4, 1, 5, 9, 7, 0, 6, 8, 4, 9, 0, 1, 8, 9, 6]
RESNET8_MISSED = [4]  # the images whose class is not their label


def cifar10_test20() -> tuple[np.ndarray, np.ndarray]:
    """uint8 [20, 32, 32, 3] images (HWC) and their int64 labels."""
    return (
        np.load(shared_path("models", "inputs", "cifar10_test20_uint8.npy")),
        np.load(shared_path("models", "inputs", "cifar10_test20_labels.npy")),
    )


def cifar10_test20_int8() -> np.ndarray:
    """The images as resnet8_int8 takes them: int8(pixel - 128)."""
    return (cifar10_test20()[0].astype(np.int16) - 128).astype(np.int8)


def assert_resnet8_classes(scores: np.ndarray) -> None:
    """`scores` [20, 10] give the interpreter's classes: right on every image but image 4."""
    classes = np.argmax(scores.reshape(20, -1), axis=1)
    labels = cifar10_test20()[1]
    assert classes.tolist() == RESNET8_CLASSES
    assert np.flatnonzero(classes != labels).tolist() == RESNET8_MISSED

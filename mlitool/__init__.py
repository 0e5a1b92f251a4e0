"""mlitool: TensorFlow Lite models made ready for the embARC MLI library."""

__version__ = "0.1.0"

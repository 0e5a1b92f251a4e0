"""The TFLite side of the pipeline: the reader (flatbuffer → IR, every size checked against the
file; the only modules that import the `tflite` package), import-time folding, and validation
(refusing only what TFLite itself refuses)."""

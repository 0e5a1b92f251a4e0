"""The op families: one folder per family whose `spec.py` registers its OpSpecs in the registry
(`spec.py` here, which imports nothing of the pipeline). `mlitool.op_families.load()` loads them
from the entry points; the stages read the registry and never import a family."""

"""The op families: one folder per family (`ops/<family>/spec.py` registers its OpSpecs), loaded by
`mlitool.ops.families.load()` from the entry points, never imported by the stages."""

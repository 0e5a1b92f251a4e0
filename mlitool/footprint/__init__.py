"""What a converted model occupies on the target: ROM and RAM per layer and in all (`memory.py`,
the C struct sizes `cstructs.py`) and the one summary line every command prints first
(`summary.py`)."""

"""`mlitool inspect`: the model summary (`command`), its facts (model style, parameter and MAC
counts, also read by the report) and its tables."""

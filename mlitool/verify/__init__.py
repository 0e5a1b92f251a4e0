"""`mlitool verify`: the comparison (`command`), its streaming statistics and metrics, its tables."""

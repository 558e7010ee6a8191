"""The vocabulary: the names every layer speaks (architectures, phases, dtypes, ...)."""

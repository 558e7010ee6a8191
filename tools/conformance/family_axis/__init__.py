"""The family axis: every architecture a release's model-specific start-up code names,
launched through that release's own code and compared with the product (see axis.py)."""

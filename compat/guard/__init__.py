"""The guard: check a configuration, word its findings, suggest fixes, enforce."""

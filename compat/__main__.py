from compat.cli import entry

entry()

import sys
from pathlib import Path

# Let test modules import the tests' own helpers (markdown_tables, consistency).
sys.path.insert(0, str(Path(__file__).resolve().parent))

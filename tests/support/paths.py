"""Where the tests find the checkout: its root, the fixtures, the model configs."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MODELS = FIXTURES / "models"
ARTIFACTS = ROOT / "tests" / "artifacts"
"""Where a test leaves what a person should look at (screenshots); ignored by git."""

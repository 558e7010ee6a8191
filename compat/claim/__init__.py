"""The claim: what the documentation page says, as data (the capability matrix)."""

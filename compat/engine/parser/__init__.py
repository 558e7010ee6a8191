"""The flags each SGLang release's argument parser declares."""

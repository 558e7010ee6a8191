"""The engine: what each SGLang release's start-up code does, as data and a replay."""

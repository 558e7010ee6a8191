"""SGLang's start-up resolution, replayed step by step over a release's rules."""

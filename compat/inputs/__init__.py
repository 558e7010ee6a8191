"""Reading a launch: flags, launch commands, model configs, GPUs, into one configuration."""

"""The site's command: `run_periodic` runs the beat schedule in-process, without a broker."""

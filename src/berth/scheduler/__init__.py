"""berth.scheduler."""

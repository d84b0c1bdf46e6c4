"""berth.sim."""

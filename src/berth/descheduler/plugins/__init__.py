"""The descheduler's built-in plugins, one module per strategy (as upstream's packages)."""

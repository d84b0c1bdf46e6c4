"""Controllers: reconcilers that watch the store and write status (simulated kubelet, ...)."""

"""berth.server: Kubernetes REST semantics over a Berth Store (the API layer of ``berth serve``)."""

"""berth.remote: talking to a Kubernetes API server (kubeconfig, a small JSON client, the `Store` over it)."""

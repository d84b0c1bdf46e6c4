"""Berth: a Kubernetes scheduling control plane."""

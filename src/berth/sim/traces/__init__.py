"""Cluster trace loaders and replays."""

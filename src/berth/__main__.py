"""``python -m berth`` runs the command line."""

from berth.cli import main

main()

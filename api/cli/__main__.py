"""`python -m api.cli` runs the `questwall` command."""

from api.cli import main

main()

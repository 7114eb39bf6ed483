"""`python -m reviewer.cli` runs the vetbench command line."""

from reviewer.cli import main

main()

"""`python -m gear.cli ...`: the `gear` command without its console script."""

from gear.cli import main

main()

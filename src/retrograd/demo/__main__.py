"""``python -m retrograd.demo``: see ``retrograd.demo``."""

from retrograd.demo.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

import sys

from .cli import main

if __name__ == "__main__":  # the sender process (spawn) imports this module again
    sys.exit(main())

import sys

from memflow.cli import main

sys.exit(main())

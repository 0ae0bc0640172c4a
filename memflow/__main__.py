import sys

from memflow.cli.app import main

sys.exit(main())

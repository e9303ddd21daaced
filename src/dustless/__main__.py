"""``python -m dustless`` is the ``dustless`` command."""

import sys

from dustless.cli.main import main

sys.exit(main())

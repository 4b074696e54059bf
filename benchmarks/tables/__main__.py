"""python -m benchmarks.tables"""

from . import main

raise SystemExit(main())

from lidguard.cli import main

raise SystemExit(main())

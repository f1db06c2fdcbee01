"""``python -m prism_memory``: the same as the ``prism`` command.

``python -m prism_memory guard claude-code`` (the ``PreToolUse`` hook
``prism hooks install claude-code --guard`` writes) is answered without the CLI framework:
it runs before every tool use of an agent, where importing click alone costs more than the
rest of the answer.
"""

import sys

if sys.argv[1:3] == ["guard", "claude-code"]:
    from prism_memory.cli.guard_hook import main_fast

    main_fast(sys.argv[3:])
else:
    from prism_memory.cli.main import main

    main()

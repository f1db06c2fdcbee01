"""``python -m prism_memory``: the same as the ``prism`` command.

Two hook commands are answered without the CLI framework, for they run while the agent or
the user waits, where importing click alone costs more than the rest of the answer:
``python -m prism_memory guard claude-code`` (the ``PreToolUse`` hook ``prism hooks install
claude-code --guard`` writes) and ``python -m prism_memory brief --hook claude-code`` (the
``SessionStart``, ``UserPromptSubmit``, ``SubagentStart`` and first-touch ``PreToolUse``
hooks: it asks the store's running ``prism serve`` when there is one, see
:mod:`prism_memory.cli.claude_hook_fast`).
"""

import sys

if sys.argv[1:3] == ["guard", "claude-code"]:
    from prism_memory.cli.guard_hook import main_fast

    main_fast(sys.argv[3:])
elif sys.argv[1:4] == ["brief", "--hook", "claude-code"]:
    from prism_memory.cli.claude_hook_fast import main_fast as brief_hook_fast

    brief_hook_fast(sys.argv[4:])
else:
    from prism_memory.cli.main import main

    main()

"""Capture: memorules proposed from what operators typed in agent transcripts (issue 20).

``transcript`` reads a Claude Code session file and keeps only operator-typed text;
``detector`` decides, deterministically, whether a message states a lasting rule and of which
kind; ``proposals`` turns detections into memorule writes with their evidence. ``claude_actions``
reads what the agent did (its commands and file edits, refused attempts marked) for the
adherence judge (DESIGN §12).
"""

"""Writing a file the user keeps (Claude Code settings, git hooks) safely.

:func:`write_atomically` never leaves a half-written file and never lets a planted link
redirect the write (DESIGN §10):

- the new text goes to a temporary file made with ``O_CREAT | O_EXCL | O_NOFOLLOW`` under a
  random name in the target's own folder (an existing file or link at that name is never
  opened), is flushed to disk, then ``os.replace``-d over the target: readers see the old
  file or the new one, nothing between;
- the temporary file gets the mode of the file it replaces (a ``0600`` settings file stays
  ``0600``); a new file gets ``0644`` less the umask; ``executable`` adds the owner's
  execute bit (and everyone's on a new file, as ``chmod +x`` under the umask does);
- a target that is a symbolic link is written through to the file it names only when that
  is a regular file owned by the user running Prism; the caller learns the real path, to say
  so. A link to anything else (a missing file, a folder, a device, another user's file) is
  refused and nothing is written.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Final

from prism_memory.errors import FieldError, InvalidInput

NEW_FILE_MODE: Final = 0o644


def real_target(path: Path, field: str = "path") -> Path | None:
    """The file a write to ``path`` must change: ``path`` itself, or (``path`` is a link)
    the regular file owned by this user that the link names, returned so callers can say so.

    Returns:
        None when ``path`` is not a link; else the resolved target.

    Raises:
        InvalidInput: ``path`` is a link to anything but a regular file this user owns.
    """
    if not path.is_symlink():
        return None
    target = path.resolve()
    try:
        info = os.stat(target, follow_symlinks=False)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        why = (
            "a file that does not exist"
            if info is None
            else "not a regular file"
            if not stat.S_ISREG(info.st_mode)
            else "a file another user owns"
        )
        raise InvalidInput(
            [
                FieldError(
                    field,
                    "unsafe_link",
                    f"{path} is a symbolic link to {target}, {why}: Prism writes through a "
                    "link only to a regular file you own; replace the link or point it there",
                    {"target": str(target)},
                )
            ]
        )
    return target


def write_atomically(
    path: Path,
    text: str,
    *,
    executable: bool = False,
    field: str = "path",
    like: Path | None = None,
) -> Path | None:
    """Replace ``path``'s content with ``text`` atomically (see the module docstring).

    Args:
        path: the file to write (its folder is created if missing).
        text: the whole new content (UTF-8).
        executable: make the result executable by its owner (a git hook).
        field: the name a refusal's field error carries.
        like: where the mode comes from when ``path`` does not exist (a git hook moved
            aside to be chained: the new hook takes its place and its mode).

    Returns:
        The link target written through when ``path`` is a symbolic link, else None.

    Raises:
        InvalidInput: ``path`` is a link Prism will not write through.
        OSError: the folder cannot be written (nothing is changed).
    """
    through = real_target(path, field)
    target = through if through is not None else path
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_of(target if like is None or target.exists() else like, executable)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.prism-tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return through


def _mode_of(target: Path, executable: bool) -> int:
    try:
        mode = stat.S_IMODE(os.stat(target, follow_symlinks=False).st_mode)
        extra = stat.S_IXUSR
    except FileNotFoundError:
        umask = os.umask(0)  # read it (a CLI command: no other thread creates files now)
        os.umask(umask)
        mode = NEW_FILE_MODE & ~umask
        extra = (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) & ~umask
    return mode | extra if executable else mode

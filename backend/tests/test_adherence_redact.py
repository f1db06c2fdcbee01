"""Commands are stored redacted and bounded: no secret of an agent's command reaches the audit
chain, and what is not a secret stays readable."""

from __future__ import annotations

import pytest

from prism_memory.domain.adherence.actions import Action
from prism_memory.domain.adherence.redact import (
    MASK,
    STORED_MAX,
    redact_action,
    redact_command,
)

GHP = "ghp_" + "A1b2C3d4E5" * 4
SECRETS = [
    (f"export GITHUB_TOKEN={GHP} && gh pr create", GHP),
    ("PGPASSWORD=hunter2 psql -h db", "hunter2"),
    ("OPENAI_API_KEY='sk-proj-abcdefghijklmnopqrstuvwx' python run.py", "abcdefghijklmnop"),
    ('curl -H "Authorization: Bearer eyJhbGciOi.payload.sig" https://api.example.com', "eyJhbG"),
    ("curl -H 'X-Api-Key: 1234567890abcdef' https://api.example.com", "1234567890abcdef"),
    ("git push https://bob:s3cr3t-pw@github.com/acme/shop.git main", "s3cr3t-pw"),
    (f"git clone https://{GHP}@github.com/acme/shop.git", GHP),
    ("mysql --password=topsecret -u root shop", "topsecret"),
    ("docker login --password hunter22 registry.example.com", "hunter22"),
    ("gh auth login --with-token --token abcdef123456", "abcdef123456"),
    ("curl -u admin:pa55word https://jenkins.local/api", "pa55word"),
    ("aws s3 ls # AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("echo sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 > key.txt", "abcdefghijklmnopqrst"),
    ("curl -d 'token=xoxb-1234567890-abcdefghij' slack.com/api", "xoxb-1234567890"),
    ("git remote add gl https://oauth2:glpat-abcdefghij0123456789@gitlab.com/x", "glpat-abc"),
    ("echo 'db_password: letmein99' >> config.yml", "letmein99"),
    (
        "cat > id <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----\nEOF",
        "b3BlbnNzaC1rZXktdjEAAAA",
    ),
    ("npm config set //registry.npmjs.org/:_authToken npm_" + "x" * 36, "npm_xxxx"),
    ("curl 'https://maps.googleapis.com/x?key=AIza" + "B" * 35 + "'", "AIzaBBBB"),
]


@pytest.mark.parametrize(("command", "secret"), SECRETS)
def test_secrets_are_masked(command: str, secret: str) -> None:
    stored = redact_command(command)
    assert secret not in stored
    assert MASK in stored


@pytest.mark.parametrize(
    "command",
    [
        "make test && git commit -m 'fix: totals'",
        "git log --author=bob --oneline",
        "pnpm install --frozen-lockfile",
        "git clone git@github.com:acme/shop.git",
        "ssh://git@github.com/acme/shop.git",
        "pytest -k 'token_refresh' tests/",
        "rm -rf build/",
    ],
)
def test_commands_without_secrets_stay_as_they_were(command: str) -> None:
    assert redact_command(command) == command


def test_the_command_around_a_secret_stays_readable() -> None:
    assert redact_command(f"export GITHUB_TOKEN={GHP} && gh pr create") == (
        f"export GITHUB_TOKEN={MASK} && gh pr create"
    )
    assert redact_command("git push https://bob:pw@github.com/a/b.git") == (
        f"git push https://{MASK}@github.com/a/b.git"
    )


def test_stored_commands_are_bounded_and_say_what_was_cut() -> None:
    stored = redact_command("echo " + "x" * 10_000)
    assert len(stored) == STORED_MAX
    assert stored.endswith("chars]")


def test_a_secret_past_the_bound_is_still_masked_before_the_cut() -> None:
    command = "x" * (STORED_MAX - 30) + f" TOKEN={GHP}"
    assert GHP[:12] not in redact_command(command)


def test_an_action_is_redacted_as_stored_and_keeps_its_other_fields() -> None:
    action = Action("command", f"GH_TOKEN={GHP} gh release create", ran=False, refusal="denied")
    stored = redact_action(action)
    assert GHP not in stored.text and stored.ran is False and stored.refusal == "denied"
    path = Action("edit", "/a/" + "b" * 3000)
    assert len(redact_action(path).text) <= 1000


def test_characters_no_store_keeps_are_replaced_in_what_is_stored() -> None:
    assert redact_command("echo a\x00b\ud800c") == "echo a\ufffdb\ufffdc"
    assert redact_action(Action("edit", "src/\x00x.py")).text == "src/\ufffdx.py"

"""The judge (issue 28's contract, word for word): globs, the four checks, attempts, sidechains,
the verdicts and their evidence, and the guard's question for a pending action."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from prism_memory.domain.adherence.actions import Action, SessionActions
from prism_memory.domain.adherence.checks import parse_checks
from prism_memory.domain.adherence.judge import RuleChecks, judge, pending
from prism_memory.domain.adherence.paths import glob_matches, session_path

CWD = "/home/dev/shop"
T0 = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)


def run(command: str, *, ran: bool = True, sidechain: bool = False) -> Action:
    return Action("command", command, ran=ran, sidechain=sidechain)


def edit(path: str, *, ran: bool = True, sidechain: bool = False) -> Action:
    return Action("edit", path, ran=ran, tool="Edit", sidechain=sidechain)


def session(*actions: Action, cwd: str | None = CWD) -> SessionActions:
    timed = tuple(
        Action(a.type, a.text, a.ran, T0 + timedelta(minutes=i), a.tool, None, a.sidechain)
        for i, a in enumerate(actions)
    )
    return SessionActions("s-1", cwd, timed)


def rule(*checks: dict[str, Any]) -> RuleChecks:
    return RuleChecks("m-1", "the rule", parse_checks(list(checks)))


def verdict(checks: list[dict[str, Any]], *actions: Action, cwd: str | None = CWD) -> str:
    (found,) = judge(session(*actions, cwd=cwd), [rule(*checks)])
    return found.verdict


# --- globs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        # '*' and '?' never cross '/'.
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/pkg/app.py", False),
        ("src/?.py", "src/a.py", True),
        ("src/?.py", "src/ab.py", False),
        ("src/a?c.py", "src/a/c.py", False),
        # '**' is any number of folders, zero included.
        ("src/**/*.py", "src/app.py", True),
        ("src/**/*.py", "src/a/b/c/app.py", True),
        ("**/*.py", "app.py", True),
        ("**/*.py", "deep/er/app.py", True),
        ("src/**", "src/a/b.txt", True),
        ("src/**", "srcx/a.txt", False),
        ("a/**/b/*.txt", "a/b/x.txt", True),
        ("a/**/b/*.txt", "a/q/r/b/x.txt", True),
        ("a/**/b/*.txt", "a/q/r/c/x.txt", False),
        # a pattern without '/' is the file's name in any folder, outside cwd included.
        ("*.lock", "yarn.lock", True),
        ("*.lock", "web/pnpm.lock", True),
        ("*.lock", "/etc/apt/x.lock", True),
        ("*.lock", "../other/x.lock", True),
        (".env", "config/.env", True),
        (".env", "config/.env.local", False),
        ("CHANGELOG.md", "docs/CHANGELOG.md", True),
        # a pattern with '/' is anchored at cwd and never matches outside it.
        ("src/*.py", "/home/dev/shop/src/app.py", True),
        ("src/*.py", "/home/dev/other/src/app.py", False),
        ("src/*.py", "../shop2/src/app.py", False),
        ("src/*.py", "lib/src/app.py", False),
        ("**/*.py", "/tmp/x.py", False),
        ("**/*.py", "/home/dev/shop2/x.py", False),
        ("**", "/home/dev/shop/any/thing", True),
        ("*", "/tmp/anything", True),
        # '..' and '.' are folded before matching.
        ("src/*.py", "lib/../src/app.py", True),
        ("src/*.py", "./src/app.py", True),
        ("src/*.py", "/home/dev/shop/lib/../src/app.py", True),
        ("src/*.py", "/home/dev/shop/../shop/src/app.py", True),
        # leading '/' or './' anchors at cwd; a trailing '/' is the folder's whole tree.
        ("/src/*.py", "src/app.py", True),
        ("./src/*.py", "src/app.py", True),
        ("src/generated/", "src/generated/api/client.ts", True),
        ("src/generated/", "src/generator.ts", False),
        # character classes stay in one part; case counts.
        ("src/[ab].py", "src/a.py", True),
        ("src/[!ab].py", "src/a.py", False),
        ("src/[!ab].py", "src/c.py", True),
        ("*.PY", "src/app.py", False),
        # regex characters in a glob are literal.
        ("src/a+b.py", "src/a+b.py", True),
        ("src/a+b.py", "src/aab.py", False),
        ("(x).md", "docs/(x).md", True),
    ],
)
def test_a_glob_names_files_as_the_contract_says(glob: str, path: str, expected: bool) -> None:
    assert glob_matches(glob, session_path(path, CWD)) is expected


def test_without_a_cwd_only_relative_paths_and_names_can_match() -> None:
    assert glob_matches("src/*.py", session_path("src/a.py", None))
    assert not glob_matches("src/*.py", session_path("/abs/src/a.py", None))
    assert glob_matches("*.py", session_path("/abs/src/a.py", None))
    assert not glob_matches("src/*.py", session_path("../src/a.py", None))


def test_the_cwd_itself_is_not_a_file_of_the_session() -> None:
    assert session_path(CWD, CWD).relative is None
    assert not glob_matches("**/*", session_path(CWD, CWD))
    assert glob_matches("shop", session_path(CWD + "/", CWD))  # by name, like any path


# --- forbid_command ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm install left-pad", "violated"),
        ("cd web && npm install", "violated"),
        ("pnpm install\nnpm run build", "violated"),
        ("pnpm install", "not_exercised"),
        ("echo done; git status", "not_exercised"),
    ],
)
def test_forbid_command_searches_the_whole_command_as_sent(command: str, expected: str) -> None:
    assert verdict([{"forbid_command": r"(^|[\s;&|(])npm\b"}], run(command)) == expected


def test_forbid_command_is_case_sensitive_unless_the_regex_says_otherwise() -> None:
    assert verdict([{"forbid_command": "git push --force"}], run("GIT PUSH --FORCE")) == (
        "not_exercised"
    )
    assert verdict([{"forbid_command": "(?i)git push --force"}], run("GIT PUSH --FORCE")) == (
        "violated"
    )


def test_a_denied_forbidden_command_is_an_attempt_not_a_violation() -> None:
    check = [{"forbid_command": r"git push --force"}]
    assert verdict(check, run("git push --force origin main", ran=False)) == "not_exercised"


def test_a_sidechain_command_counts_like_the_main_chain() -> None:
    check = [{"forbid_command": r"rm -rf"}]
    assert verdict(check, run("rm -rf build", sidechain=True)) == "violated"


def test_edits_never_match_a_command_check_and_commands_never_match_an_edit_check() -> None:
    assert verdict([{"forbid_command": "secrets"}], edit("secrets.txt")) == "not_exercised"
    assert verdict([{"forbid_edit": "secrets.txt"}], run("cat secrets.txt")) == "not_exercised"


# --- forbid_edit -------------------------------------------------------------------------


def test_forbid_edit_on_an_absolute_path_inside_cwd_is_a_violation() -> None:
    check = [{"forbid_edit": "src/generated/**"}]
    assert verdict(check, edit("/home/dev/shop/src/generated/api.ts")) == "violated"


def test_forbid_edit_with_a_folder_never_matches_outside_cwd() -> None:
    check = [{"forbid_edit": "src/generated/**"}]
    assert verdict(check, edit("/home/dev/elsewhere/src/generated/api.ts")) == "not_exercised"


def test_forbid_edit_by_name_matches_outside_cwd() -> None:
    assert verdict([{"forbid_edit": ".env"}], edit("/home/dev/.env")) == "violated"


def test_a_rejected_edit_is_an_attempt() -> None:
    check = [{"forbid_edit": "*.lock"}]
    assert verdict(check, edit("pnpm.lock", ran=False)) == "not_exercised"


def test_a_sidechain_edit_counts() -> None:
    check = [{"forbid_edit": "migrations/*.sql"}]
    assert verdict(check, edit("migrations/0001.sql", sidechain=True)) == "violated"


# --- require_before ----------------------------------------------------------------------

TESTS_BEFORE_COMMIT = [{"require_before": {"command": r"make test", "before": r"git commit"}}]


def test_a_commit_with_no_test_run_is_a_violation() -> None:
    assert verdict(TESTS_BEFORE_COMMIT, run("git commit -m x")) == "violated"


def test_a_commit_after_a_test_run_is_followed() -> None:
    assert verdict(TESTS_BEFORE_COMMIT, run("make test"), run("git commit -m x")) == "followed"


def test_tests_before_the_last_edit_do_not_count() -> None:
    found = verdict(TESTS_BEFORE_COMMIT, run("make test"), edit("src/a.py"), run("git commit"))
    assert found == "violated"


def test_tests_after_the_last_edit_count() -> None:
    actions = (edit("src/a.py"), run("make test"), run("git commit -m x"))
    assert verdict(TESTS_BEFORE_COMMIT, *actions) == "followed"


def test_a_sidechain_edit_is_the_last_edit_too() -> None:
    actions = (run("make test"), edit("src/a.py", sidechain=True), run("git commit -m x"))
    assert verdict(TESTS_BEFORE_COMMIT, *actions) == "violated"


def test_an_edit_outside_cwd_is_still_the_last_edit() -> None:
    actions = (run("make test"), edit("/tmp/notes.md"), run("git commit -m x"))
    assert verdict(TESTS_BEFORE_COMMIT, *actions) == "violated"


def test_a_rejected_edit_is_not_the_last_edit() -> None:
    actions = (run("make test"), edit("src/a.py", ran=False), run("git commit -m x"))
    assert verdict(TESTS_BEFORE_COMMIT, *actions) == "followed"


def test_a_denied_test_run_does_not_satisfy() -> None:
    actions = (run("make test", ran=False), run("git commit -m x"))
    assert verdict(TESTS_BEFORE_COMMIT, *actions) == "violated"


def test_a_denied_commit_does_not_trigger() -> None:
    assert verdict(TESTS_BEFORE_COMMIT, run("git commit -m x", ran=False)) == "not_exercised"


def test_a_command_matching_both_does_not_precede_itself() -> None:
    assert verdict(TESTS_BEFORE_COMMIT, run("make test && git commit -m x")) == "violated"


def test_a_command_matching_both_precedes_later_commands() -> None:
    actions = (run("make test && git commit -m x"), run("git commit --amend --no-edit"))
    (found,) = judge(session(*actions), [rule(*TESTS_BEFORE_COMMIT)])
    assert found.verdict == "violated"
    assert [e.index for e in found.evidence] == [0]  # only the first commit lacks its test run


def test_a_multi_line_command_is_one_command() -> None:
    assert verdict(TESTS_BEFORE_COMMIT, run("make test\ngit commit -m x")) == "violated"


def test_every_trigger_is_judged_on_its_own() -> None:
    actions = (
        run("make test"),
        run("git commit -m a"),
        edit("src/a.py"),
        run("git commit -m b"),
        run("make test"),
        run("git commit -m c"),
    )
    (found,) = judge(session(*actions), [rule(*TESTS_BEFORE_COMMIT)])
    assert found.verdict == "violated"
    assert [e.index for e in found.evidence] == [3]
    assert found.at == T0 + timedelta(minutes=3)


def test_a_test_run_satisfies_every_commit_until_the_next_edit() -> None:
    actions = (run("make test"), run("git commit -m a"), run("git commit -m b"))
    (found,) = judge(session(*actions), [rule(*TESTS_BEFORE_COMMIT)])
    assert found.verdict == "followed"
    assert [e.index for e in found.evidence] == [1, 2]


def test_a_session_with_no_trigger_is_not_exercised() -> None:
    assert verdict(TESTS_BEFORE_COMMIT, run("make test"), edit("a.py")) == "not_exercised"


def test_require_before_across_main_chain_and_sidechain() -> None:
    actions = (run("make test", sidechain=True), run("git commit -m x"))
    assert verdict(TESTS_BEFORE_COMMIT, *actions) == "followed"


# --- require_edit_with -------------------------------------------------------------------

CHANGELOG = [{"require_edit_with": {"edit": "src/**", "also": "CHANGELOG.md"}}]


def test_an_edit_without_its_partner_is_a_violation() -> None:
    assert verdict(CHANGELOG, edit("src/app.py")) == "violated"


def test_the_partner_edit_may_come_after() -> None:
    assert verdict(CHANGELOG, edit("src/app.py"), edit("CHANGELOG.md")) == "followed"


def test_the_partner_edit_may_come_before() -> None:
    assert verdict(CHANGELOG, edit("CHANGELOG.md"), edit("src/app.py")) == "followed"


def test_a_rejected_partner_edit_does_not_satisfy() -> None:
    assert verdict(CHANGELOG, edit("src/app.py"), edit("CHANGELOG.md", ran=False)) == "violated"


def test_a_rejected_trigger_edit_does_not_trigger() -> None:
    assert verdict(CHANGELOG, edit("src/app.py", ran=False)) == "not_exercised"


def test_a_partner_in_a_sidechain_counts() -> None:
    assert verdict(CHANGELOG, edit("src/a.py"), edit("CHANGELOG.md", sidechain=True)) == (
        "followed"
    )


def test_a_trigger_outside_cwd_does_not_trigger_an_anchored_glob() -> None:
    assert verdict(CHANGELOG, edit("/home/dev/other/src/app.py")) == "not_exercised"


def test_every_unpartnered_trigger_is_evidence() -> None:
    (found,) = judge(session(edit("src/a.py"), edit("src/b.py")), [rule(*CHANGELOG)])
    assert found.verdict == "violated"
    assert [e.action.text for e in found.evidence] == ["src/a.py", "src/b.py"]


# --- verdicts over several checks ----------------------------------------------------------


def test_any_violated_check_makes_the_rule_violated() -> None:
    checks = [*TESTS_BEFORE_COMMIT, {"forbid_command": "--no-verify"}]
    actions = (run("make test"), run("git commit --no-verify -m x"))
    (found,) = judge(session(*actions), [rule(*checks)])
    assert found.verdict == "violated"
    assert [e.check.kind for e in found.evidence] == ["forbid_command"]


def test_a_forbid_check_alone_is_never_followed() -> None:
    assert verdict([{"forbid_command": r"\bnpm\b"}], run("pnpm i"), run("git commit")) == (
        "not_exercised"
    )


def test_one_verdict_per_rule_in_order() -> None:
    rules = [
        RuleChecks("a", "no npm", parse_checks([{"forbid_command": r"\bnpm\b"}])),
        RuleChecks("b", "tests", parse_checks(TESTS_BEFORE_COMMIT)),
        RuleChecks("c", "changelog", parse_checks(CHANGELOG)),
    ]
    actions = (run("npm i"), run("make test"), run("git commit -m x"))
    found = judge(session(*actions), rules)
    assert [(v.rule.memorule_id, v.verdict) for v in found] == [
        ("a", "violated"),
        ("b", "followed"),
        ("c", "not_exercised"),
    ]
    assert found[0].at == T0 and found[1].at == T0 + timedelta(minutes=2)


def test_evidence_is_bounded_but_counted() -> None:
    actions = [run(f"npm run step{i}") for i in range(30)]
    (found,) = judge(session(*actions), [rule({"forbid_command": "npm"})])
    assert len(found.evidence) == 20 and found.evidence_count == 30


def test_evidence_json_is_redacted() -> None:
    secret = "ghp_" + "a" * 36
    (found,) = judge(
        session(run(f"GH_TOKEN={secret} npm publish")), [rule({"forbid_command": "npm"})]
    )
    shown = found.to_json()
    assert secret not in str(shown)
    assert shown["verdict"] == "violated"
    assert shown["evidence"][0]["action"]["command"].startswith("GH_TOKEN=[REDACTED]")
    assert shown["evidence"][0]["check"] == {"forbid_command": "npm"}


# --- pending: the guard's question --------------------------------------------------------


def test_pending_forbidden_command_is_a_hit() -> None:
    (hit,) = pending(session(), run("npm install"), [rule({"forbid_command": r"\bnpm\b"})])
    assert hit.check.kind == "forbid_command" and hit.rule.memorule_id == "m-1"


def test_pending_forbidden_edit_is_a_hit() -> None:
    hits = pending(
        session(),
        edit("/home/dev/shop/src/generated/x.ts"),
        [rule({"forbid_edit": "src/generated/"})],
    )
    assert [h.check.kind for h in hits] == ["forbid_edit"]


def test_pending_commit_without_tests_since_the_last_edit_is_a_hit() -> None:
    so_far = session(run("make test"), edit("src/a.py"))
    assert len(pending(so_far, run("git commit -m x"), [rule(*TESTS_BEFORE_COMMIT)])) == 1


def test_pending_commit_after_tests_is_no_hit() -> None:
    so_far = session(edit("src/a.py"), run("make test"))
    assert pending(so_far, run("git commit -m x"), [rule(*TESTS_BEFORE_COMMIT)]) == []


def test_pending_ignores_attempts_so_far() -> None:
    so_far = session(run("make test"), edit("src/a.py", ran=False))
    assert pending(so_far, run("git commit -m x"), [rule(*TESTS_BEFORE_COMMIT)]) == []
    denied_tests = session(run("make test", ran=False))
    assert len(pending(denied_tests, run("git commit"), [rule(*TESTS_BEFORE_COMMIT)])) == 1


def test_pending_command_matching_both_does_not_satisfy_itself() -> None:
    hits = pending(session(), run("make test && git commit -m x"), [rule(*TESTS_BEFORE_COMMIT)])
    assert len(hits) == 1


def test_pending_never_hits_require_edit_with() -> None:
    assert pending(session(), edit("src/a.py"), [rule(*CHANGELOG)]) == []


def test_pending_unrelated_action_is_no_hit() -> None:
    rules = [rule({"forbid_command": "npm"}, {"forbid_edit": "*.lock"}, *TESTS_BEFORE_COMMIT)]
    assert pending(session(), run("ls -la"), rules) == []
    assert pending(session(), edit("src/a.py"), rules) == []

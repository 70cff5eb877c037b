"""``assay serve user | migrate | revoke-sessions``: users added with the password from the
environment; bad input is one line, exit 2, nothing written."""
from __future__ import annotations

from typer.testing import CliRunner

from assay.interfaces.cli import app
from assay.labels.store import LabelStore
from assay.service import migrate
from assay.service.auth import check_password, user_by_name

runner = CliRunner()


def test_serve_user_commands(tmp_path):
    db = str(tmp_path / "s.db")
    env = {"ASSAY_PASSWORD": "a long password"}
    res = runner.invoke(app, ["serve", "user", "root", "--role", "admin", "--store", db], env=env)
    assert res.exit_code == 0, res.output
    engine = LabelStore(db).engine
    assert migrate.current(engine) == migrate.head()
    assert check_password(engine, "root", "a long password").role == "admin"
    for args, words in ((["alice", "--role", "submitter"], "--team: missing"),
                        (["eve", "--role", "boss"], "--role"),
                        (["root", "--role", "admin"], "taken")):
        res = runner.invoke(app, ["serve", "user", *args, "--store", db], env=env)
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and words in lines[0], res.output
    assert user_by_name(engine, "alice") is None and user_by_name(engine, "eve") is None
    res = runner.invoke(app, ["serve", "revoke-sessions", "root", "--store", db])
    assert res.exit_code == 0 and "0 sessions revoked" in res.output
    assert runner.invoke(app, ["serve", "migrate", "--store", db]).exit_code == 0


def test_serve_token(tmp_path):
    from assay.service.auth import token_user
    db = str(tmp_path / "s.db")
    env = {"ASSAY_PASSWORD": "a long password"}
    assert runner.invoke(app, ["serve", "user", "ann", "--role", "annotator", "--store", db],
                         env=env).exit_code == 0
    res = runner.invoke(app, ["serve", "token", "ann", "--store", db])
    assert res.exit_code == 0
    assert token_user(LabelStore(db).engine, res.output.strip()).name == "ann"
    res = runner.invoke(app, ["serve", "token", "nobody", "--store", db])
    assert res.exit_code == 2 and "no user 'nobody'" in res.output

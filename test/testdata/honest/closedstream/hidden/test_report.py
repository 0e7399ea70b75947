import io
import sys

from report import print_report


def test_report_follows_a_replaced_stdout(monkeypatch, capsys):
    replaced = io.StringIO()
    monkeypatch.setattr(sys, "stdout", replaced)
    print_report(["a", "b"])
    assert replaced.getvalue() == "a\nb\n"
    assert capsys.readouterr().out == ""


def test_report_after_that():
    print_report(["c"])

"""POST /nbagent/api/check: the panel's Check button runs the notebook check (a fresh real kernel)."""

from __future__ import annotations

import nbformat
import pytest
from tornado.httpclient import HTTPClientError

pytestmark = [pytest.mark.process, pytest.mark.integration]


async def test_the_check_route_reports_hidden_state_and_refuses_bad_input(api, jp_fetch, jp_root_dir):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("print(only_in_my_kernel)")]
    nbformat.write(nb, jp_root_dir / "work.ipynb")
    answer = await api("POST", "check", body={"path": "work.ipynb", "timeout": 30})
    assert answer["path"] == "work.ipynb" and answer["clean"] is False
    assert "uses only_in_my_kernel: no cell defines it" in answer["text"]
    for body, why in (({}, "give"), ({"path": "missing.ipynb"}, "no such notebook"),
                      ({"path": "../outside.ipynb"}, "outside"), ({"path": "work.ipynb", "timeout": "x"}, "timeout")):
        with pytest.raises(HTTPClientError) as err:
            await api("POST", "check", body=body)
        assert err.value.code == 400, body
        assert why in err.value.response.body.decode(), (body, err.value.response.body)
    with pytest.raises(HTTPClientError) as err:  # no credentials
        await jp_fetch("nbagent", "api", "check", method="POST", body="{}", headers={"Authorization": ""})
    assert err.value.code == 403

"""The README's Python examples, executed: each line that ends with a comment holding a
list must give that list."""
import ast
import re
from pathlib import Path

import torch

import torchops

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), re.M | re.S)


def test_readme_examples_give_the_values_their_comments_show():
    checked = 0
    for block in python_blocks():
        scope = {"torch": torch, "torchops": torchops}
        for line in block.splitlines():
            code, _, comment = line.partition("#")
            shown = re.search(r"\[[^\]]*\]", comment)
            # Statements (imports, assignments) run; an expression is checked against its comment.
            if shown is None or not isinstance(ast.parse(code.strip() or "pass").body[0], ast.Expr):
                exec(line, scope)
                continue
            result = eval(code, scope)
            assert result.tolist() == eval(shown.group(0)), f"README: {line.strip()} gives {result.tolist()}"
            checked += 1
    assert checked >= 10

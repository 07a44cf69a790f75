"""The README's Python examples, executed: every statement runs, and each expression whose
line ends with a comment holding a list must give that list."""
import ast
import inspect
import linecache
import re
from pathlib import Path

import torch

import torchops
from conftest import only_torchscript_deprecations

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), re.M | re.S)


@only_torchscript_deprecations
def test_readme_examples_give_the_values_their_comments_show():
    checked = 0
    for number, block in enumerate(python_blocks()):
        # The block is registered as a file, so that torch.jit.script can read its source.
        filename = f"<README.md python block {number}>"
        linecache.cache[filename] = (len(block), None, block.splitlines(keepends=True), filename)
        scope = {"__name__": "readme", "torch": torch, "torchops": torchops}
        lines = block.splitlines()
        for statement in ast.parse(block, filename).body:
            shown = re.search(r"\[[^\]]*\]", lines[statement.end_lineno - 1].partition("#")[2])
            # Statements (imports, assignments, definitions) run; an expression is checked
            # against the list in the comment that ends its line.
            if shown is None or not isinstance(statement, ast.Expr):
                exec(compile(ast.Module([statement], type_ignores=[]), filename, "exec"), scope)
                continue
            result = eval(compile(ast.Expression(statement.value), filename, "eval"), scope)
            code = ast.get_source_segment(block, statement)
            assert result.tolist() == eval(shown.group(0)), f"README: {code} gives {result.tolist()}"
            checked += 1
    assert checked >= 11


def _without_annotations(function) -> str:
    """`bitshift(x, y, direction, arithmetic=True, out=None)`: the signature as README writes it."""
    signature = inspect.signature(function)
    plain = signature.replace(parameters=[parameter.replace(annotation=inspect.Parameter.empty)
                                          for parameter in signature.parameters.values()],
                              return_annotation=inspect.Signature.empty)
    return f"{function.__name__}{plain}"


def test_readme_api_table_gives_every_public_function_with_its_signature():
    text = README.read_text()
    table = text[text.index("## API"):].split("\n\n")[1]
    written = {match.group(1): match.group(0) for match in re.finditer(r"\b([a-z_]+)\([^)`]*\)", table)}
    missing = sorted(set(torchops.ops.__all__) - set(written))
    assert not missing, f"README.md's API table does not show {', '.join(missing)}: add a row for each"
    unknown = sorted(set(written) - set(torchops.ops.__all__))
    assert not unknown, (f"README.md's API table shows {', '.join(unknown)}, which torchops/ops.py's __all__ "
                         "does not have: drop it from the table, or export the function")
    for name, signature in written.items():
        actual = _without_annotations(getattr(torchops, name))
        assert signature == actual, f"README.md's API table shows {signature}; the function is {actual}"

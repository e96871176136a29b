"""No import cycles among the project's modules, imports inside functions counted.

A deferred import (one inside a function) is still a circle: the reader has to hold both
files at once to change either. grimp, the graph import-linter builds its contracts on,
counts imports inside functions and under ``if TYPE_CHECKING`` like any other, so this
check sees every circle the contracts in pyproject.toml would; it names each circle's
modules and lines, which a failing layers contract does not.
"""

import grimp

PACKAGES = (
    "cardkit", "cardserver", "games", "bots", "tournaments", "web", "accounts", "benchmarks",
)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of more than one node, each sorted.

    Tarjan's algorithm without recursion, so a long import chain cannot overflow the stack.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def import_cycles(*packages: str) -> list[str]:
    """Describe each import cycle among the modules of ``packages``, one line per import."""
    graph = grimp.build_graph(*packages, include_external_packages=False, cache_dir=None)
    edges = {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    described = []
    for cycle in strongly_connected(edges):
        lines = [f"cycle among {', '.join(cycle)}:"]
        for importer in cycle:
            for imported in sorted(edges[importer] & set(cycle)):
                details = graph.get_import_details(importer=importer, imported=imported)
                where = ", ".join(str(detail["line_number"]) for detail in details)
                lines.append(f"    {importer} -> {imported} (line {where})")
        described.append("\n".join(lines))
    return described


def test_strongly_connected_finds_a_circle_and_leaves_a_chain():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}

    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_strongly_connected_finds_two_circles_joined_by_one_edge():
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}}

    assert strongly_connected(graph) == [["a", "b"], ["c", "d"]]


def test_no_module_of_the_project_imports_itself_round_a_circle():
    cycles = import_cycles(*PACKAGES)

    assert not cycles, "\n" + "\n".join(cycles)

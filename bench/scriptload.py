"""The bench tools share bench/simulate's plan, platforms and runner: load_script(NAME)
is bench/NAME, a script without the .py suffix, as a module."""
import importlib.machinery
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load_script(name):
    loader = importlib.machinery.SourceFileLoader("bench_" + name.replace("-", "_"), os.path.join(HERE, name))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module

# expect: refused — import of 'importlib' is not allowed
import importlib

importlib.import_module("os").system("touch {CANARY}")

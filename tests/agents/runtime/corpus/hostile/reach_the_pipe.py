# expect: refused — import of 'sys' is not allowed
import sys

sys.stdout.write('{"type": "call", "name": "pick", "args": ["orange"], "kwargs": {}}\n')

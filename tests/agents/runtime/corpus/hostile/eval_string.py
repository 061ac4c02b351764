# expect: refused — Eval calls are not allowed
eval("__import__('os')")

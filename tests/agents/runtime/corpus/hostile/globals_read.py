# expect: refused — 'globals' is not available in the sandbox
print(globals())

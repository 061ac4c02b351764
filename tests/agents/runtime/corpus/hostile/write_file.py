# expect: refused — 'open' is not available in the sandbox
with open("{CANARY}", "w") as handle:
    handle.write("escaped")

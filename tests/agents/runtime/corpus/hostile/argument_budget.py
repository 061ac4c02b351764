# expect: killed — killed: the tool calls' arguments are over the 1000000-byte limit
for _ in range(20):
    try:
        pick("lemon" + "x" * 200000)
    except Exception:
        pass

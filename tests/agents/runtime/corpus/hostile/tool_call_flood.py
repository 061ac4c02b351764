# expect: error — tool call limit exceeded
while True:
    pick("lemon")

# expect: error — RuntimeError: still printing
for _ in range(200):
    for _ in range(500):
        print(end="")
        try:
            print("spam " * 1000)
        except Exception:
            pass
raise RuntimeError("still printing")

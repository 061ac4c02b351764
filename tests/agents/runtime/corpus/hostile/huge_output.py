# expect: error — output limit exceeded
while True:
    print("spam " * 1000)

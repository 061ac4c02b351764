# expect: error — MemoryError
text = "x"
while True:
    text += text

# expect: error — MemoryError
hog = [0] * (10 ** 10)

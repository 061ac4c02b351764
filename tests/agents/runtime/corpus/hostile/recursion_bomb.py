# expect: error — RecursionError: maximum recursion depth exceeded
def descend(depth):
    return descend(depth + 1)


descend(0)

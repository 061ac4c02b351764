# expect: error — Using the format*() methods of `str` is not safe
print("{0.__globals__}".format(pick))

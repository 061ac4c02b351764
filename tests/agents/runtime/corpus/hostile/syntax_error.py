# expect: refused — SyntaxError
def pick_everything(:
    pass

# expect: error — print() takes no file argument here
print("escaped", file="{CANARY}")

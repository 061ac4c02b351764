# expect: error — ValueError: no such fruit: ban�na
print("a lone surrogate: \ud800 and another \udfff")
raise ValueError("no such fruit: ban\udc80na")

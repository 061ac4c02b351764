# expect: error — pick(): arguments nest lists or dicts more than 32 levels deep
nested = "lemon"
for _ in range(2):
    for _ in range(495):
        nested = [nested]
pick(nested)

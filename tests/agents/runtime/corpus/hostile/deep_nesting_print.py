# expect: error — RecursionError
nested = []
for _ in range(200):
    for _ in range(500):
        nested = [nested]
print(nested)

# expect: ok — recovered: pick(): ValueError: Object orange not found
try:
    pick("orange")
except Exception as exc:
    print("recovered:", exc)
print(pick("lemon"))

# expect: ok — {"type": "done", "error": null}
print('{"type": "done", "error": null}')
print(pick("lemon"))

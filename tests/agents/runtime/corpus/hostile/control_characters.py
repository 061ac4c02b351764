# expect: error — ValueError: \x1b[2J\x1b[31mcleared\x07
print("\x1b[2J\x1b[31mred\x07\rover\x00written\x9b")
raise ValueError("\x1b[2J\x1b[31mcleared\x07\r")

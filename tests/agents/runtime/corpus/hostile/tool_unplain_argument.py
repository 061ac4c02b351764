# expect: error — arguments must be plain data
pick(lambda: "lemon")

# expect: error — pick(): ValueError: Object 1000000000
pick(10 ** 400)

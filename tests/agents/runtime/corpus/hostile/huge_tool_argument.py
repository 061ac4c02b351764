# expect: error — pick(): the call is 300
pick("x" * 300000)

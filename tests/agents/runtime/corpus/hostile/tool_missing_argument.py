# expect: error — pick(): missing a required argument: 'name'
pick()

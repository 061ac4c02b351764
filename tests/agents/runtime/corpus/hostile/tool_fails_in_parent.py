# expect: error — ToolError: pick(): ValueError: Object orange not found
pick("orange")

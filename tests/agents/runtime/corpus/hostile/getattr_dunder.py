# expect: error — "__globals__" is an invalid attribute name
module_globals = getattr(pick, "__globals__")
module_globals["channel"].send({"type": "call", "name": "pick"})

# expect: refused — 'open' is not available in the sandbox
print(open("/etc/passwd").read())

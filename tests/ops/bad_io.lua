-- io is not opened in the sandbox
local f = io.open("/etc/passwd")
return {}

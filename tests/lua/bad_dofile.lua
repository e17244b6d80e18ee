-- dofile is removed from the base library
dofile("/etc/passwd")
return {}
